// NoArenaTag: the tag an allocator is constructed with to stand for the
// global heap (arena 0: what `new` or std::make_shared would use) instead of
// a new arena. Its own header, free of the recorder, so that code built
// without the recorder (the workloads compiled against another standard
// library, tracer/workloads/stdlib_events_main.cc) can name it.
#ifndef ALLOCTRACE_TRACER_NO_ARENA_H_
#define ALLOCTRACE_TRACER_NO_ARENA_H_

namespace alloctrace {

struct NoArenaTag {
  explicit NoArenaTag() = default;
};
inline constexpr NoArenaTag kNoArena{};

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_NO_ARENA_H_
