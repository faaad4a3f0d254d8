
// ---- ${name} ----
namespace l2x_${name} {
using namespace cute;
using LayoutA = ${layout_a};
using LayoutB = ${layout_b};
using LayoutD = ${layout_d};
using TileShape = Shape<_${tile_m}, _${tile_n}, _${tile_k}>;
using ClusterShape = Shape<_${cluster_m}, _${cluster_n}, _1>;${epilogue_callbacks}
using CollectiveEpilogue = typename ${epilogue_builder}<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    ${epilogue_tile}, float, float,
    void, LayoutD, 8,
    cutlass::half_t, LayoutD, 8,
    ${epilogue_schedule}${epilogue_fusion}>::CollectiveOp;
using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    cutlass::half_t, LayoutA, 8,
    cutlass::half_t, LayoutB, 8,
    float, TileShape, ClusterShape,
    ${stages},
    ${kernel_schedule}>::CollectiveOp;
using GemmKernel = cutlass::gemm::kernel::GemmUniversal<
    Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue, ${tile_scheduler}>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
using E = Entry<Gemm, ${swap}, ${b_col}, ${streamk}>;
}  // namespace l2x_${name}
