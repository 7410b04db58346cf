// An uninstrumented program for the in-situ tests (replayer_in_situ_test):
//   in_situ_testprog ok      allocates a little with malloc, exits 0
//   in_situ_testprog exit1   says why on stderr, exits 1
//   in_situ_testprog hang    sleeps until killed
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "ok";
  if (std::strcmp(mode, "exit1") == 0) {
    std::fprintf(stderr, "in_situ_testprog: cannot open input.cfg: No such file\n");
    return 1;
  }
  if (std::strcmp(mode, "hang") == 0) {
    while (true) pause();
  }
  std::vector<void*> blocks;
  for (int i = 0; i < 10000; ++i) blocks.push_back(std::malloc(16 + i % 200));
  for (void* p : blocks) std::free(p);
  std::printf("ok\n");
  return 0;
}
