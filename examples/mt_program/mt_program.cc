// mt_program: producer threads allocate messages with plain `new`, push them
// through a queue, and consumer threads `delete` them; no alloctrace code,
// so it is what a user's uninstrumented multi-threaded program looks like to
// whole-program capture (every message is freed on another thread than the
// one that allocated it, all in the global heap).
//
//   mt_program [producers [consumers [messages [min_size [max_size]]]]]
//   defaults:   2          2          100000    16         1024
//
// `messages` is per producer. Each message is two allocations: the Message
// object and its payload (a std::vector<char> of a size drawn uniformly
// from [min_size, max_size] by the producer's own random source, so what
// each producer allocates does not depend on the scheduler). The queue (a
// std::deque under a mutex) holds at most 1024 messages: producers wait
// when it is full. Prints one line: the counts and a checksum of the
// payloads consumed. Exit status 0, or 2 for a bad argument.
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Message {
  explicit Message(size_t size, uint64_t seq) : payload(size, static_cast<char>(seq)), id(seq) {}
  std::vector<char> payload;
  uint64_t id;
};

constexpr size_t kQueueCapacity = 1024;

class Queue {
 public:
  explicit Queue(int producers) : producers_(producers) {}

  void Push(Message* m) {
    std::unique_lock<std::mutex> l(mu_);
    not_full_.wait(l, [this] { return q_.size() < kQueueCapacity; });
    q_.push_back(m);
    not_empty_.notify_one();
  }
  void ProducerDone() {
    std::lock_guard<std::mutex> l(mu_);
    if (--producers_ == 0) not_empty_.notify_all();
  }
  // nullptr once every producer is done and the queue is empty.
  Message* Pop() {
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait(l, [this] { return !q_.empty() || producers_ == 0; });
    if (q_.empty()) return nullptr;
    Message* m = q_.front();
    q_.pop_front();
    not_full_.notify_one();
    return m;
  }

 private:
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Message*> q_;  // guarded by mu_
  int producers_;           // guarded by mu_
};

bool ParseArg(int argc, char** argv, int i, long* value) {
  if (argc <= i) return true;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    std::fprintf(stderr, "mt_program: argument %d (\"%s\") must be an integer >= 1\n", i, argv[i]);
    return false;
  }
  *value = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long producers = 2, consumers = 2, messages = 100000, min_size = 16, max_size = 1024;
  if (argc > 6 || !ParseArg(argc, argv, 1, &producers) || !ParseArg(argc, argv, 2, &consumers) ||
      !ParseArg(argc, argv, 3, &messages) || !ParseArg(argc, argv, 4, &min_size) ||
      !ParseArg(argc, argv, 5, &max_size)) {
    std::fprintf(stderr,
                 "usage: mt_program [producers [consumers [messages [min_size [max_size]]]]]\n");
    return 2;
  }
  if (max_size < min_size) max_size = min_size;
  Queue queue(static_cast<int>(producers));
  std::vector<uint64_t> sums(static_cast<size_t>(consumers), 0);
  std::vector<std::thread> threads;
  for (long p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      std::mt19937_64 rng(static_cast<uint64_t>(p) + 1);
      const uint64_t span = static_cast<uint64_t>(max_size - min_size) + 1;
      for (long i = 0; i < messages; ++i) {
        queue.Push(
            new Message(static_cast<size_t>(min_size) + rng() % span, static_cast<uint64_t>(i)));
      }
      queue.ProducerDone();
    });
  }
  for (long c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      uint64_t sum = 0;
      while (Message* m = queue.Pop()) {
        sum += m->payload.size() + static_cast<unsigned char>(m->payload.back());
        delete m;
      }
      sums[static_cast<size_t>(c)] = sum;
    });
  }
  for (std::thread& t : threads) t.join();
  uint64_t checksum = 0;
  for (uint64_t s : sums) checksum += s;
  std::printf("mt_program: %ld producers, %ld consumers, %ld messages each, checksum %llu\n",
              producers, consumers, messages, static_cast<unsigned long long>(checksum));
  return 0;
}
