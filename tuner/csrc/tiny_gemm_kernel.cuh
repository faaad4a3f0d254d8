
// ---- ${name} ----
namespace l2x_${name} {
using Shape = TinyShape<${tile_m}, ${tile_n}, ${tile_k}, ${warps_m}, ${warps_n}, ${stages}, ${b_k_major}>;
using E = TinyEntry<Shape, ${b_k_major}>;
}  // namespace l2x_${name}
