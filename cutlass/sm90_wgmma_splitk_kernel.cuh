// ---- ${name} ----
namespace l2x_${name} {
using E = l2x_wgsk::WgEntry<
    l2x_wgsk::WgShape<${tile_m}, ${tile_n}, ${tile_k}, ${stages}, ${b_k_major}, ${mcast_a}, ${reduce}>>;
}  // namespace l2x_${name}
