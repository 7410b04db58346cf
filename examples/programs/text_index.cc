// text_index: an inverted index of a generated text, written as a user would
// write one, with every container on the allocator named by the alias below.
//
//   text_index [words [queries]]     defaults: 400000 and 100000
//
// The text: `words` words drawn (Zipf-like: a few words are very common)
// from a vocabulary of words/20 random lowercase words of 3 to 12 letters.
// The index: a std::map from word to the std::list of its positions, the
// words being std::basic_string over Alloc<char> (each word copied into the
// map is a string of its own, and with TraceAllocator an arena of its own).
// Then `queries` queries: look up a word, count how often a second word
// follows it (walking the front of both lists), and every tenth query forget the oldest
// position of a word (a word whose list empties leaves the index). Prints
// the index size and a checksum. The defaults take about 0.9 s of CPU with
// std::allocator (measured on this project's loaded 2-core machine); raise
// both for longer runs.
//
// With TraceAllocator the run is recorded to $ALLOCTRACE_OUT (default
// alloctrace.<pid>.trace), complete when the program exits. To run on
// another allocator, change only the alias (a default-constructible std
// allocator template; the program is single-threaded).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "alloctrace/pool/pool_allocator.h"     // alloctrace::pool::*Allocator, for the alias
#include "alloctrace/tracer/trace_allocator.h"  // alloctrace::TraceAllocator, for the alias

// The one line to change to run on another allocator, e.g.
//   using Alloc = std::allocator<T>;
//   using Alloc = alloctrace::pool::SlabAllocator<T>;
template <class T>
using Alloc = alloctrace::TraceAllocator<T>;

namespace {

using String = std::basic_string<char, std::char_traits<char>, Alloc<char>>;
using Positions = std::list<int, Alloc<int>>;
using Index =
    std::map<String, Positions, std::less<String>, Alloc<std::pair<const String, Positions>>>;

// The vocabulary: random words, most of them longer than a string's inline
// buffer. Plain std::vector and std::string: built once, not the subject.
std::vector<std::string> Vocabulary(size_t size, std::mt19937& rng) {
  std::vector<std::string> words(size);
  for (std::string& w : words) {
    w.resize(3 + rng() % 10);
    for (char& c : w) c = static_cast<char>('a' + rng() % 26);
    w += "ing_term";  // heap-allocated keys: longer than 15 characters
  }
  return words;
}

// A word index, skewed towards the front of the vocabulary.
size_t DrawWord(size_t vocabulary, std::mt19937& rng) {
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  return static_cast<size_t>(u * u * u * static_cast<double>(vocabulary)) % vocabulary;
}

// How often `second` comes right after `first` among their first positions:
// a merge of two sorted lists, stopped after kMergeSteps steps (as a search
// that wants the first hits would).
constexpr int kMergeSteps = 256;
int CountFollowing(const Positions& first, const Positions& second) {
  int count = 0;
  auto a = first.begin();
  auto b = second.begin();
  for (int steps = 0; steps < kMergeSteps && a != first.end() && b != second.end(); ++steps) {
    if (*a + 1 == *b) {
      ++count;
      ++a;
      ++b;
    } else if (*a + 1 < *b) {
      ++a;
    } else {
      ++b;
    }
  }
  return count;
}

long Arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    std::fprintf(stderr, "usage: text_index [words [queries]] (integers >= 1)\n");
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long words = Arg(argc, argv, 1, 400000);
  const long queries = Arg(argc, argv, 2, 100000);
  std::mt19937 rng(11);
  const std::vector<std::string> vocabulary = Vocabulary(static_cast<size_t>(words / 20 + 1), rng);
  uint64_t checksum = 0;
  size_t indexed = 0;
  {
    Index index;
    for (long pos = 0; pos < words; ++pos) {
      const std::string& w = vocabulary[DrawWord(vocabulary.size(), rng)];
      index[String(w.data(), w.size())].push_back(static_cast<int>(pos));
    }
    for (long q = 0; q < queries; ++q) {
      const std::string& w1 = vocabulary[DrawWord(vocabulary.size(), rng)];
      const std::string& w2 = vocabulary[DrawWord(vocabulary.size(), rng)];
      auto first = index.find(String(w1.data(), w1.size()));
      auto second = index.find(String(w2.data(), w2.size()));
      if (first == index.end() || second == index.end()) continue;
      checksum += static_cast<uint64_t>(CountFollowing(first->second, second->second));
      checksum += first->second.size();
      if (q % 10 == 0) {
        first->second.pop_front();
        if (first->second.empty()) index.erase(first);
      }
    }
    indexed = index.size();
  }
  std::printf("text_index: %ld words, %ld queries, %zu words indexed at the end, checksum %llu\n",
              words, queries, indexed, static_cast<unsigned long long>(checksum));
  return 0;
}
