// A program for capture_test to record. Modes:
//   known    kEach allocations of each known shape (below), through every
//            replaced function, all freed
//   fork     allocates, forks; parent and child each allocate a known size
//   threads  4 threads allocate and free, some blocks freed by another thread
//   spin     allocates, prints "ready <pid>", keeps allocating until killed
//   sites    MakeNodes: 100 operator new; MakeBuffers: 50 malloc (for call
//            sites: built with frame pointers, both called from main)
//   dlerror  prints what dlerror() holds at the start, then as known
// Pointers go through g_sink so the compiler cannot drop a malloc/free pair.
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kEach = 10;

void* volatile g_sink;
void Escape(void* p) { g_sink = p; }

struct Big {
  char bytes[7008];
};
struct alignas(256) Over {
  char bytes[2560];
};

// The shapes capture_test looks for (elem_size x count, alignment):
//   malloc 1001 (1x1001, 16)      calloc 7 x 143 (143x7, 16)
//   realloc 2002 -> 3003 (REALLOC 1x3003, 16)
//   reallocarray NULL -> 3 x 1000 (ALLOC via realloc(NULL), 1x3000, 16)
//   posix_memalign 64, 4004 (1x4004, 64)    aligned_alloc 128, 5120 (1x5120, 128)
//   memalign 32, 1111 (1x1111, 32)          valloc 3333 (1x3333, 4096)
//   new char[6006] (1x6006, 16)    new Big (1x7008, 16)    new Over (1x2560, 256)
int Known() {
  std::vector<void*> c_blocks;
  std::vector<char*> arrays;
  std::vector<Big*> bigs;
  std::vector<Over*> overs;
  for (int i = 0; i < kEach; ++i) {
    c_blocks.push_back(malloc(1001));
    c_blocks.push_back(calloc(7, 143));
    void* r = malloc(2002);
    Escape(r);
    c_blocks.push_back(realloc(r, 3003));
    c_blocks.push_back(reallocarray(nullptr, 3, 1000));
    void* a = nullptr;
    if (posix_memalign(&a, 64, 4004) != 0) return 1;
    c_blocks.push_back(a);
    c_blocks.push_back(aligned_alloc(128, 5120));
    c_blocks.push_back(memalign(32, 1111));
    c_blocks.push_back(valloc(3333));
    arrays.push_back(new char[6006]);
    bigs.push_back(new Big);
    overs.push_back(new Over);
  }
  for (void* p : c_blocks) {
    if (p == nullptr) return 1;
    Escape(p);
    free(p);
  }
  for (char* p : arrays) {
    Escape(p);
    delete[] p;
  }
  for (Big* p : bigs) {
    Escape(p);
    delete p;  // sized delete
  }
  for (Over* p : overs) {
    if (reinterpret_cast<uintptr_t>(p) % 256 != 0) return 1;
    Escape(p);
    delete p;  // sized, aligned delete
  }
  printf("known done\n");
  return 0;
}

// Parent: 5 x 11111 before the fork, 5 x 33333 after. Child: 5 x 22222, and
// frees the parent's 11111 blocks (unknown to its own trace).
int Fork() {
  std::vector<void*> before;
  for (int i = 0; i < 5; ++i) before.push_back(malloc(11111));
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    for (int i = 0; i < 5; ++i) {
      void* p = malloc(22222);
      Escape(p);
      free(p);
    }
    for (void* p : before) free(p);
    printf("child %d\n", getpid());
    fflush(stdout);
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  for (int i = 0; i < 5; ++i) {
    void* p = malloc(33333);
    Escape(p);
    free(p);
  }
  for (void* p : before) free(p);
  printf("parent %d\n", getpid());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// Each of 4 threads churns small blocks, then fills its slot with 1000
// blocks; after a barrier it frees the next thread's slot.
constexpr int kThreads = 4;
constexpr int kSlot = 1000;
pthread_barrier_t g_barrier;
std::vector<void*> g_slots[kThreads];

void ThreadBody(int t) {
  for (int i = 0; i < 20000; ++i) {
    void* p = malloc(16 + (i * 7 + t) % 500);
    Escape(p);
    free(p);
    if (i % 100 == 0) {
      auto* v = new std::vector<int>(i % 50 + 1);
      Escape(v);
      delete v;
    }
  }
  for (int i = 0; i < kSlot; ++i) g_slots[t].push_back(malloc(4000 + t));
  pthread_barrier_wait(&g_barrier);
  for (void* p : g_slots[(t + 1) % kThreads]) free(p);
}

int Threads() {
  pthread_barrier_init(&g_barrier, nullptr, kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(ThreadBody, t);
  for (std::thread& t : threads) t.join();
  pthread_barrier_destroy(&g_barrier);
  printf("threads done\n");
  return 0;
}

int Spin() {
  std::vector<void*> live(1000, nullptr);
  for (uint64_t i = 0;; ++i) {
    void*& slot = live[i % live.size()];
    free(slot);
    slot = malloc(24 + i % 200);
    if (i == 200000) {
      usleep(300 * 1000);  // the writer flushes every 50 ms
      printf("ready %d\n", getpid());
      fflush(stdout);
    }
    if (i > 200000 && i % 1000 == 0) usleep(1000);
  }
}

struct Node {
  Node* next;
  long value[5];
};

__attribute__((noinline)) Node* MakeNodes(int n) {
  Node* head = nullptr;
  for (int i = 0; i < n; ++i) head = new Node{head, {i}};
  return head;
}

__attribute__((noinline)) std::vector<void*> MakeBuffers(int n) {
  std::vector<void*> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(malloc(200 + static_cast<size_t>(i)));
  return out;
}

int Sites() {
  Node* head = MakeNodes(100);
  std::vector<void*> buffers = MakeBuffers(50);
  while (head != nullptr) {
    Node* next = head->next;
    delete head;
    head = next;
  }
  for (void* p : buffers) free(p);
  return 0;
}

// Prints what dlerror() holds at the start: "(none)" unless something
// before main left a failed lookup's message behind.
int DlError() {
  const char* e = dlerror();
  printf("dlerror: %s\n", e != nullptr ? e : "(none)");
  return Known();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "sites") return Sites();
  if (mode == "known") return Known();
  if (mode == "fork") return Fork();
  if (mode == "threads") return Threads();
  if (mode == "spin") return Spin();
  if (mode == "dlerror") return DlError();
  fprintf(stderr, "usage: capture_testprog known|fork|threads|spin|dlerror|sites\n");
  return 2;
}
