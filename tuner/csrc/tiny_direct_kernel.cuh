
// ---- ${name} ----
namespace l2x_${name} {
using Shape = DirectShape<${tile_m}, ${tile_n}, ${tile_k}, ${warps_m}, ${warps_n}, ${warps_k}, ${copy_boxes}, ${copy_pitched}>;
using E = ${entry}<Shape>;
}  // namespace l2x_${name}
