
// CUTLASS's SM90 TMA epilogue as its collective builder makes it, but with one buffer of D in
// shared memory where the builder keeps min(subtiles, 2): each subtile's TMA store has read the
// buffer before the next subtile is written there. The bytes freed go to the mainloop
// (StageCountAutoCarveout counts them), e.g. a fifth stage for a 128x176 ping-pong tile whose two
// 64x176 buffers left room for four. Same arguments as cutlass::epilogue::collective::CollectiveBuilder.
template <class Arch, class OpClass, class TileShape, class ClusterShape, class EpilogueTileType,
          class ElementAccumulator, class ElementCompute, class ElementC, class LayoutC, int AlignmentC,
          class ElementD, class LayoutD, int AlignmentD, class Schedule,
          class FusionOp = cutlass::epilogue::fusion::LinearCombination<ElementD, ElementCompute, ElementC,
                                                                         ElementCompute>>
struct OneBufferEpilogueBuilder {
  static_assert(cute::is_void_v<ElementC>, "one D buffer is for epilogues that read no C");
  using EpilogueTile = decltype(cutlass::epilogue::collective::detail::sm90_compute_tile_shape_or_override<
                                ElementD, EpilogueTileType, Schedule, TileShape>());
  static constexpr int kSubtiles = cute::size(cute::shape_div(cute::take<0, 2>(TileShape{}), EpilogueTile{}));
  static constexpr int kThreads = cutlass::epilogue::collective::detail::sm90_is_cooperative_v<Schedule> ? 256 : 128;
  // StagesC as the builder sets it (no C is read, so it takes no shared memory); StagesD = 1; no
  // C smem reuse; the TMA store delayed to just before the next subtile's smem write, as the
  // builder does without C.
  using DispatchPolicy = cutlass::epilogue::Sm90TmaWarpSpecialized<
      cute::min(kSubtiles, 4), 1, cute::size(EpilogueTile{}) / kThreads, false, true>;
  using CollectiveOp = typename cutlass::epilogue::collective::detail::Sm90TmaBuilderImpl<
      TileShape, EpilogueTile, ElementAccumulator, ElementCompute, ElementC, LayoutC, AlignmentC,
      ElementD, LayoutD, AlignmentD, FusionOp, DispatchPolicy>::CollectiveOp;
};
