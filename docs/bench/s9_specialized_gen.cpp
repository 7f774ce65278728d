// Session 9 experiment generator (not part of the engine; docs/gpu.md "Session 9", proposal).
//
// Writes a standalone CUDA program for one morphology in which the tree is the code (no row
// table), one thread per cell, cells interleaved (row i of cell c at i * S + c, S a constant of
// the code so that each row's offset is an immediate). Rows are emitted in the order of a list
// schedule with V virtual lanes (deepest ready row first, a lane continuing its chain), so that
// independent branches interleave; y of the last R rows of the backward order lives in
// registers, the rest in shared memory [row][thread].
//
// mode solve: the Hines solve alone with constant pivots (PLAIN rows), b read and x written (16 B
//   per compartment); two kernels, every y a local ("reg") and shared memory ("smem"); checked
//   against a host solve of the same system on three cells.
// mode step: the time step of the engine's fused2 (src/neurons_stream.h: v-form, the gate update
//   of a step deferred to the next, pivots precomputed where a row's subtree has no hh), with
//   the class's geometry and simengine-prep's biophysics (hh in soma and axon, pas elsewhere,
//   dt 0.025 ms, 6.3 degC) and a clamp at the soma; hh rates from src/hh.h. Timed over 20 steps
//   after 5, ns per compartment-step against the byte floor (64 B per hh row, 16 B per passive
//   one, as simengine-bench step); checked against a host step of the same equations in Hines
//   order on three cells (max |dv| in mV after the 25 steps).
// Both measure the device copy bandwidth in the same run.
//
//   g++ -O2 -o gen docs/bench/s9_specialized_gen.cpp
//   ./gen solve|step docs/bench/s9_spec_morphologies.txt CLASS OUT.cu [V 4] [R 64] [S 256000] [W 8]
// mode wsolve (session 12): solve's two kernels and a third, "warps": a warp per subtree and a
//   lane per cell, K warps per block of 32 cells (K in R's place; docs/gpu.md "What is left").
// (W, step only: a compiler barrier every W rows, else ptxas hoists every v load and spills; 0:
// none)
//   nvcc -O3 -arch=sm_90 -Isrc -Xptxas -v OUT.cu -o prog && ./prog
// `./prog --host` runs the generated kernel bodies on the host against the host reference (no
// GPU; generate with a small S, e.g. 64, for it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct Morph {
  std::vector<int> parent, region;
  std::vector<double> length, diameter;
};

static Morph read_morph(const char *path, const std::string &name) {
  Morph m;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string cls, key;
    int n = 0;
    if (line.empty() || line[0] == '#' || !(ls >> cls >> key >> n) || cls != name)
      continue;
    if (key == "parent" || key == "region") {
      std::vector<int> &a = key == "parent" ? m.parent : m.region;
      a.resize(n);
      for (int &x : a)
        ls >> x;
    } else {
      std::vector<double> &a = key == "length" ? m.length : m.diameter;
      a.resize(n);
      for (double &x : a)
        ls >> x;
    }
  }
  return m;
}

static std::vector<int> list_order(const std::vector<int> &parent, int lanes) {
  const int n = (int)parent.size();
  std::vector<int> depth(n, 0), left(n, 0), ready, prev(lanes, -1), order;
  for (int v = 1; v < n; v++) {
    depth[v] = depth[parent[v]] + 1;
    left[parent[v]]++;
  }
  for (int v = 0; v < n; v++)
    if (left[v] == 0)
      ready.push_back(v);
  auto in = [](const std::vector<int> &a, int v) { return std::find(a.begin(), a.end(), v) != a.end(); };
  while ((int)order.size() < n) {
    std::vector<int> took(lanes, -1);
    for (int j = 0; j < lanes; j++) {
      const int u = prev[j];
      if (u > 0 && in(ready, parent[u]) && !in(took, parent[u]))
        took[j] = parent[u];
    }
    for (int j = 0; j < lanes; j++)
      if (took[j] < 0)
        for (int v : ready)
          if (!in(took, v) && (took[j] < 0 || depth[v] > depth[took[j]]))
            took[j] = v;
    for (int j = 0; j < lanes; j++) {
      const int v = took[j];
      if (v < 0)
        continue;
      order.push_back(v);
      prev[j] = v;
      ready.erase(std::find(ready.begin(), ready.end(), v));
      if (v > 0 && --left[parent[v]] == 0)
        ready.push_back(parent[v]);
    }
  }
  return order;
}

static double uniform(uint64_t *s, double lo, double hi) { // splitmix64
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

static std::string num(double x) {
  char b[40];
  snprintf(b, sizeof b, "%.17g", x);
  return b;
}
static std::string str(int x) { return std::to_string(x); }
static std::string list(const std::vector<double> &a) {
  std::string s;
  for (size_t i = 0; i < a.size(); i++)
    s += (i ? ", " : "") + num(a[i]);
  return s;
}
static std::string list(const std::vector<int> &a) {
  std::string s;
  for (size_t i = 0; i < a.size(); i++)
    s += (i ? ", " : "") + str(a[i]);
  return s;
}

static const char *PRELUDE = R"(#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstring>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#ifdef __CUDA_ARCH__
#define LDG(p) __ldg(p)
#else
#define LDG(p) (*(p))
#endif
static double copy_bandwidth() { // GB/s of a 2 GiB device-to-device copy, read + write
  const size_t cb = 1ull << 31;
  double *c1, *c2;
  CK(cudaMalloc(&c1, cb)); CK(cudaMalloc(&c2, cb));
  cudaEvent_t a, z; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&z));
  std::vector<float> ms;
  for (int r = 0; r < 6; r++) {
    CK(cudaEventRecord(a)); CK(cudaMemcpy(c2, c1, cb, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(z)); CK(cudaEventSynchronize(z));
    float m; CK(cudaEventElapsedTime(&m, a, z)); if (r) ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  CK(cudaFree(c1)); CK(cudaFree(c2));
  return 2.0 * cb / (ms[ms.size() / 2] * 1e-3) / 1e9;
}
)";

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s solve|step DATA.txt CLASS OUT.cu [lanes 4] [register rows 64] "
                    "[cells 256000] [window 8] [variant 0]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1], name = argv[3];
  const int lanes = argc > 5 ? atoi(argv[5]) : 4, reg_rows = argc > 6 ? atoi(argv[6]) : 64;
  const long cells = argc > 7 ? atol(argv[7]) : 256000;
  const int window = argc > 8 ? atoi(argv[8]) : 8; // step: a compiler barrier every `window` rows
  // step: 0 as session 9 (v loaded where its row is assembled, hh inline); 1 (session 11): every
  // v and the hh rows' m, h, n copied into shared memory at once (cp.async, the hh rows' group
  // first), the hh rows computed first (independent: ILP), then the solve from shared memory
  const int variant = argc > 9 ? atoi(argv[9]) : 0;
  const Morph mo = read_morph(argv[2], name);
  const int n = (int)mo.parent.size();
  if (n == 0 || (mode != "solve" && mode != "step" && mode != "wsolve")) {
    fprintf(stderr, "%s: no class '%s' in %s, or mode '%s' (solve, step, wsolve)\n", argv[0],
            name.c_str(), argv[2], mode.c_str());
    return 1;
  }
  const std::vector<int> &parent = mo.parent;
  std::vector<std::vector<int>> kids(n);
  for (int c = 1; c < n; c++)
    kids[parent[c]].push_back(c);
  const std::vector<int> order = list_order(parent, lanes);
  std::vector<char> in_reg(n, 0);
  for (int k = std::max(0, n - reg_rows); k < n; k++)
    in_reg[order[k]] = 1;
  auto Y = [&](int i, bool smem) {
    return (!smem || in_reg[i]) ? "y" + str(i) : "sy[" + str(i) + " * 32 + t]";
  };
  auto decl = [&](int i, bool smem) { return (!smem || in_reg[i]) ? "double " : ""; };
  FILE *f = fopen(argv[4], "w");
  if (!f) {
    perror(argv[4]);
    return 1;
  }
  fprintf(f, "// Generated by docs/bench/s9_specialized_gen.cpp (%s) for %s: %d rows, %d virtual\n"
             "// lanes, %d register rows. Experiment only (docs/gpu.md \"Session 9\").\n",
          mode.c_str(), name.c_str(), n, lanes, std::min(n, reg_rows));
  fprintf(f, "%s", PRELUDE);
  fprintf(f, "static const int N = %d;\nstatic const long S = %ld;\n", n, cells);

  if (mode == "solve" || mode == "wsolve") {
    // a diagonally dominant tree matrix: A[p][c] = u[c], A[c][p] = l[c]
    uint64_t seed = 1;
    std::vector<double> u(n), l(n), d(n);
    for (int i = 0; i < n; i++) {
      u[i] = -uniform(&seed, 0.1, 1.0);
      l[i] = -uniform(&seed, 0.1, 1.0);
      d[i] = 2.0 + uniform(&seed, 0.0, 1.0);
    }
    for (int c = 1; c < n; c++) {
      d[c] -= l[c];
      d[parent[c]] -= u[c];
    }
    u[0] = l[0] = 0.0;
    std::vector<double> dp(d);
    for (int c = n - 1; c > 0; c--)
      dp[parent[c]] -= u[c] / dp[c] * l[c];
    auto body = [&](bool smem) {
      std::string out;
      for (int i : order) { // backward: r = b - sum u_c y_c, y = r / d'
        std::string e = "LDG(b + (long)" + str(i) + " * S + c)";
        for (int k : kids[i])
          e = "fma(" + num(-u[k]) + ", " + Y(k, smem) + ", " + e + ")";
        out += "  " + std::string(decl(i, smem)) + Y(i, smem) + " = (" + e + ") * " +
               num(1.0 / dp[i]) + ";\n";
      }
      for (auto it = order.rbegin(); it != order.rend(); ++it) { // forward, parents first
        const int i = *it;
        if (i > 0)
          out += "  " + Y(i, smem) + " = fma(" + num(-l[i] / dp[i]) + ", " + Y(parent[i], smem) +
                 ", " + Y(i, smem) + ");\n";
        out += "  x[(long)" + str(i) + " * S + c] = " + Y(i, smem) + ";\n";
      }
      return out;
    };
    for (int smem = 0; smem < 2; smem++) {
      const char *k = smem ? "smem" : "reg";
      fprintf(f, "__host__ __device__ static inline void solve_%s_body(const double *__restrict__ b, "
                 "double *__restrict__ x, long c, int t, double *sy) {\n  (void)t; (void)sy;\n%s}\n",
              k, body(smem).c_str());
      fprintf(f, "__global__ void __launch_bounds__(32) solve_%s(const double *__restrict__ b, "
                 "double *__restrict__ x) {\n  extern __shared__ double sy[];\n"
                 "  const int t = threadIdx.x;\n  const long c = blockIdx.x * 32L + t;\n"
                 "  if (c < S) solve_%s_body(b, x, c, t, sy);\n}\n", k, k);
    }
    // wsolve (session 12): a warp per subtree, a lane per cell. The tree is cut into its largest
    // subtrees of at most n / K rows (pieces; the rows above them the trunk), the pieces dealt
    // to K warps largest first (warp 0 starts with the trunk's rows). Block: K warps, 32 cells;
    // warp w eliminates its pieces (y in its own registers: each warp's code is a branch of its
    // own, so their y do not add up), leaves each piece root's y in shared memory, barrier 1;
    // warp 0 solves the trunk and leaves each piece root's parent's x, barrier 2; each warp
    // substitutes forward through its pieces. bar.sync with a thread count from different
    // branches (sm_70+).
    const int K = std::max(1, reg_rows);
    int n_pieces = 0;
    if (mode == "wsolve") {
      std::vector<int> size(n, 1), warp(n, -1), slot(n, -1);
      for (int i = n - 1; i > 0; i--)
        size[parent[i]] += size[i];
      const double T = (double)n / K;
      std::vector<int> pieces;
      for (int i = 0; i < n; i++)
        if (size[i] <= T && (i == 0 || size[parent[i]] > T))
          pieces.push_back(i);
      int trunk = 0;
      for (int i = 0; i < n; i++)
        trunk += size[i] > T;
      std::sort(pieces.begin(), pieces.end(), [&](int a, int b) { return size[a] > size[b]; });
      std::vector<long> load(K, 0);
      load[0] = trunk;
      for (int r : pieces) {
        const int w = (int)(std::min_element(load.begin(), load.end()) - load.begin());
        load[w] += size[r];
        slot[r] = n_pieces++;
        warp[r] = w;
      }
      for (int i = 1; i < n; i++) // parents come first: a piece's rows take its root's warp
        if (slot[i] < 0)
          warp[i] = warp[parent[i]];
      long worst = 0;
      for (long x : load) worst = std::max(worst, x);
      fprintf(f, "// wsolve: K %d warps, %d pieces, trunk %d rows, at most %ld rows per warp\n", K,
              n_pieces, trunk, worst);
      auto W = [&](int i) { // y of row i as seen from its parent's code
        return slot[i] >= 0 && warp[parent[i]] != warp[i] ? "sr[" + str(slot[i]) + " * 32 + t]"
                                                            : "y" + str(i);
      };
      std::string code;
      for (int w = 0; w < K; w++) {
        code += "  if (w == " + str(w) + ") {\n";
        for (int i : order) // backward through the warp's pieces
          if (warp[i] == w) {
            std::string e = "LDG(b + (long)" + str(i) + " * S + c)";
            for (int k : kids[i])
              e = "fma(" + num(-u[k]) + ", y" + str(k) + ", " + e + ")";
            code += "    double y" + str(i) + " = (" + e + ") * " + num(1.0 / dp[i]) + ";\n";
            if (slot[i] >= 0)
              code += "    sr[" + str(slot[i]) + " * 32 + t] = y" + str(i) + ";\n";
          }
        code += "    asm volatile(\"bar.sync 1, " + str(32 * K) + ";\" ::: \"memory\");\n";
        if (w == 0) { // the trunk, then each piece root's parent's x
          for (int i : order)
            if (warp[i] < 0) {
              std::string e = "LDG(b + (long)" + str(i) + " * S + c)";
              for (int k : kids[i])
                e = "fma(" + num(-u[k]) + ", " + W(k) + ", " + e + ")";
              code += "    double y" + str(i) + " = (" + e + ") * " + num(1.0 / dp[i]) + ";\n";
            }
          for (auto it = order.rbegin(); it != order.rend(); ++it)
            if (warp[*it] < 0) {
              const int i = *it;
              if (i > 0)
                code += "    y" + str(i) + " = fma(" + num(-l[i] / dp[i]) + ", y" + str(parent[i]) +
                        ", y" + str(i) + ");\n";
              code += "    x[(long)" + str(i) + " * S + c] = y" + str(i) + ";\n";
            }
          for (int i = 1; i < n; i++)
            if (slot[i] >= 0)
              code += "    sx[" + str(slot[i]) + " * 32 + t] = y" + str(parent[i]) + ";\n";
        }
        code += "    asm volatile(\"bar.sync 2, " + str(32 * K) + ";\" ::: \"memory\");\n";
        for (auto it = order.rbegin(); it != order.rend(); ++it) // forward through the pieces
          if (warp[*it] == w) {
            const int i = *it;
            if (i > 0)
              code += "    y" + str(i) + " = fma(" + num(-l[i] / dp[i]) + ", " +
                      (slot[i] >= 0 ? "sx[" + str(slot[i]) + " * 32 + t]" : "y" + str(parent[i])) +
                      ", y" + str(i) + ");\n";
            code += "    x[(long)" + str(i) + " * S + c] = y" + str(i) + ";\n";
          }
        code += "  }\n";
      }
      fprintf(f, "__global__ void __launch_bounds__(%d) solve_w(const double *__restrict__ b, "
                 "double *__restrict__ x) {\n  __shared__ double sr[%d * 32], sx[%d * 32];\n"
                 "  const int t = threadIdx.x & 31, w = threadIdx.x >> 5;\n"
                 "  const long c = blockIdx.x * 32L + t;\n%s}\n",
              32 * K, std::max(1, n_pieces), std::max(1, n_pieces), code.c_str());
      fprintf(f, "#define WSOLVE %d\n", K);
    }
    fprintf(f, "static const double hu[N] = {%s};\nstatic const double hl[N] = {%s};\n"
               "static const double hd[N] = {%s};\nstatic const int hp[N] = {%s};\n",
            list(u).c_str(), list(l).c_str(), list(d).c_str(), list(parent).c_str());
    fprintf(f, "%s", R"(static void host_solve(std::vector<double> &r) {
  std::vector<double> dd(hd, hd + N);
  for (int i = N - 1; i > 0; i--) { double f = hu[i] / dd[i]; dd[hp[i]] -= f * hl[i]; r[hp[i]] -= f * r[i]; }
  r[0] /= dd[0];
  for (int i = 1; i < N; i++) r[i] = (r[i] - hl[i] * r[hp[i]]) / dd[i];
}
// The relative 2-norm error of cell's solution in x against the host solve of b.
static double cell_error(const std::vector<double> &hb, const std::vector<double> &hx, long cell) {
  std::vector<double> r(N);
  for (int i = 0; i < N; i++) r[i] = hb[(size_t)i * S + cell];
  host_solve(r);
  double num = 0, den = 0;
  for (int i = 0; i < N; i++) { double dx = hx[(size_t)i * S + cell] - r[i]; num += dx * dx; den += r[i] * r[i]; }
  return std::sqrt(num / den);
}
int main(int argc, char **argv) {
  const size_t bytes = (size_t)N * S * sizeof(double);
  if (argc > 1 && !strcmp(argv[1], "--host")) { // the kernel bodies on the host, no GPU
    std::vector<double> hb((size_t)N * S), hx((size_t)N * S), sy((size_t)N * 32);
    for (size_t k = 0; k < hb.size(); k++) hb[k] = std::sin(0.001 * (double)k) + 0.5;
    double err = 0;
    for (long cell : {0L, 1L, S - 1})
      for (int v = 0; v < 2; v++) {
        if (v == 0) solve_reg_body(hb.data(), hx.data(), cell, (int)(cell % 32), sy.data());
        else solve_smem_body(hb.data(), hx.data(), cell, (int)(cell % 32), sy.data());
        err = std::max(err, cell_error(hb, hx, cell));
      }
    printf("solve --host: max relative error %.2e\n", err);
    return err < 1e-12 ? 0 : 1;
  }
  const double copy = copy_bandwidth();
  double *b, *x;
  CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&x, bytes));
  std::vector<double> hb((size_t)N * S);
  for (size_t k = 0; k < hb.size(); k++) hb[k] = std::sin(0.001 * (double)k) + 0.5;
  CK(cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice));
  const int smem = N * 32 * 8;
  CK(cudaFuncSetAttribute(solve_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  printf("solve: %d rows, %ld cells, copy %.1f GB/s\n", N, S, copy);
  cudaEvent_t a, z; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&z));
#ifdef WSOLVE
  const int variants = 3;
#else
  const int variants = 2;
#endif
  for (int v = 0; v < variants; v++) {
    const unsigned blocks = (unsigned)((S + 31) / 32);
    std::vector<float> t;
    for (int r = 0; r < 21; r++) {
      CK(cudaEventRecord(a));
      if (v == 0) solve_reg<<<blocks, 32>>>(b, x);
      else if (v == 1) solve_smem<<<blocks, 32, smem>>>(b, x);
#ifdef WSOLVE
      else solve_w<<<blocks, 32 * WSOLVE>>>(b, x);
#endif
      CK(cudaGetLastError()); CK(cudaEventRecord(z)); CK(cudaEventSynchronize(z));
      float m; CK(cudaEventElapsedTime(&m, a, z)); if (r) t.push_back(m);
    }
    std::sort(t.begin(), t.end());
    const double ms = t[t.size() / 2];
    std::vector<double> hx((size_t)N * S);
    CK(cudaMemcpy(hx.data(), x, bytes, cudaMemcpyDeviceToHost));
    double err = 0;
    for (long cell : {0L, 1L, S - 1}) err = std::max(err, cell_error(hb, hx, cell));
    const double comp = (double)N * S, gbs = 16.0 * comp / (ms * 1e-3) / 1e9;
    printf("  %-5s %9.4f ms  %.5f ns/comp  %7.1f GB/s@16B  %5.1f%% of copy  rel.err %.2e\n",
           v == 0 ? "reg" : v == 1 ? "smem" : "warps", ms, ms * 1e6 / comp, gbs,
           100.0 * gbs / copy, err);
  }
  return 0;
}
)");
    fclose(f);
    return 0;
  }

  // ---- step: constants of the v-form (uS, nF, ms, mV, nA), as simengine-prep's defaults ----
  const double dt = 0.025, ra = 100.0, cm = 1.0, gpas = 1.0 / 30000.0, epas = -65.0;
  const double gnabar = 0.12, gkbar = 0.036, gl = 0.0003, el = -54.3;
  std::vector<double> area(n), res(n), g(n, 0.0), a(n), cst(n), dk(n), gna(n, 0), gk(n, 0);
  std::vector<int> hh(n, 0), hh_index(n, -1), dconst(n, 1);
  int n_hh = 0;
  for (int i = 0; i < n; i++) {
    area[i] = M_PI * mo.diameter[i] * mo.length[i];                              // um2
    res[i] = 4.0 * ra * mo.length[i] / (M_PI * mo.diameter[i] * mo.diameter[i]) * 1e4; // ohm
    hh[i] = mo.region[i] == 1 || mo.region[i] == 2;
    if (hh[i])
      hh_index[i] = n_hh++;
  }
  std::vector<double> daxial(n, 0.0);
  for (int i = 1; i < n; i++) {
    g[i] = 1e6 / (res[i] / 2.0 + res[parent[i]] / 2.0); // uS
    daxial[i] += g[i];
    daxial[parent[i]] += g[i];
  }
  for (int i = n - 1; i >= 0; i--) {
    if (hh[i])
      dconst[i] = 0;
    if (i > 0 && !dconst[i])
      dconst[parent[i]] = 0;
  }
  for (int i = 0; i < n; i++) {
    const double s = area[i] * 1e-2; // S/cm2 -> uS
    a[i] = cm * area[i] * 1e-5 / dt;
    const double gp = hh[i] ? 0.0 : gpas * s;
    cst[i] = gp * epas + (hh[i] ? gl * s * el : 0.0);
    dk[i] = a[i] + daxial[i] + gp + (hh[i] ? gl * s : 0.0);
    if (hh[i]) {
      gna[i] = gnabar * s;
      gk[i] = gkbar * s;
    }
  }
  // eliminated constants: DCONST rows' d' and f, folded into the parents' constant d
  std::vector<double> dfold(dk), fconst(n, 0.0), inv(n, 0.0);
  for (int i = n - 1; i >= 0; i--)
    if (dconst[i]) {
      inv[i] = 1.0 / dfold[i];
      fconst[i] = g[i] * inv[i];
      if (i > 0)
        dfold[parent[i]] -= g[i] * fconst[i];
    }
  std::string out;
  auto V = [&](int i) { return "v[(long)" + str(i) + " * S + c]"; };
  // variant 1: slot i of sy holds v_i, then y_i, then x_i; the hh state after the N rows
  if (variant == 1) {
    for (int i = 0; i < n; i++)
      if (hh[i]) {
        const std::string j = str(hh_index[i]), I = str(i);
        out += "  copy8_async(&sy[" + I + " * 32 + t], &" + V(i) + ");\n";
        for (int q = 0; q < 3; q++)
          out += std::string("  copy8_async(&sy[(N + 3 * ") + j + " + " + str(q) + ") * 32 + t], &g" +
                 "mhn"[q] + "[(long)" + j + " * S + c]);\n";
      }
    out += "  copy_commit();\n";
    for (int i = 0; i < n; i++)
      if (!hh[i])
        out += "  copy8_async(&sy[" + str(i) + " * 32 + t], &" + V(i) + ");\n";
    out += "  copy_commit();\n  copy_wait<1>();\n";
    int hk = 0;
    for (int i : order) {
      if (!hh[i])
        continue;
      if (hk > 0 && hk % 4 == 0)
        out += "  asm volatile(\"\" ::: \"memory\");\n";
      const std::string j = str(hh_index[i]), I = str(i);
      out += "  const double v" + I + " = sy[" + I + " * 32 + t];\n";
      out += "  double bx" + I + " = 0.0, dg" + I + " = 0.0;\n  {\n";
      out += "    double m = sy[(N + 3 * " + j + ") * 32 + t], h = sy[(N + 3 * " + j +
             " + 1) * 32 + t], n = sy[(N + 3 * " + j + " + 2) * 32 + t];\n";
      out += "    se_stream_hh(v" + I + ", &m, &h, &n, update, " + num(dt) + ", 1.0, " +
             num(gna[i]) + ", " + num(gk[i]) + ", 50.0, -77.0, &bx" + I + ", &dg" + I + ");\n";
      out += "    gm[" + j + " * S + c] = m; gh[" + j + " * S + c] = h; gn[" + j +
             " * S + c] = n;\n  }\n";
      hk++;
    }
    out += "  copy_wait<0>();\n";
  }
  int emitted = 0;
  for (int i : order) { // backward: assemble and eliminate row i
    if (window > 0 && ++emitted % window == 0) // keeps every v load from being hoisted (spills)
      out += "  asm volatile(\"\" ::: \"memory\");\n";
    std::string b = "fma(" + num(a[i]) + ", v" + str(i) + ", " + num(cst[i]) + ")";
    if (variant == 1) {
      if (!hh[i])
        out += "  const double v" + str(i) + " = sy[" + str(i) + " * 32 + t];\n";
    } else {
      out += "  const double v" + str(i) + " = " + V(i) + ";\n";
    }
    if (hh[i] && variant == 1) {
      b = "(" + b + " + bx" + str(i) + ")";
    } else if (hh[i]) {
      const std::string j = str(hh_index[i]);
      out += "  double bx" + str(i) + " = 0.0, dg" + str(i) + " = 0.0;\n  {\n";
      out += "    double m = gm[" + j + " * S + c], h = gh[" + j + " * S + c], n = gn[" + j +
             " * S + c];\n";
      out += "    se_stream_hh(v" + str(i) + ", &m, &h, &n, update, " + num(dt) + ", 1.0, " +
             num(gna[i]) + ", " + num(gk[i]) + ", 50.0, -77.0, &bx" + str(i) + ", &dg" + str(i) +
             ");\n";
      out += "    gm[" + j + " * S + c] = m; gh[" + j + " * S + c] = h; gn[" + j +
             " * S + c] = n;\n  }\n";
      b = "(" + b + " + bx" + str(i) + ")";
    }
    if (i == 0)
      b = "(" + b + " + stim * amp[c])";
    for (int k : kids[i])
      b = "fma(" + num(g[k]) + ", " + Y(k, true) + ", " + b + ")";
    if (dconst[i]) {
      out += "  " + std::string(decl(i, true)) + Y(i, true) + " = " + b + " * " + num(inv[i]) +
             ";\n";
    } else {
      std::string dd = num(dfold[i]) + (hh[i] ? " + dg" + str(i) : "");
      for (int k : kids[i])
        if (!dconst[k])
          dd = "fma(" + num(-g[k]) + ", f" + str(k) + ", " + dd + ")";
      out += "  const double r" + str(i) + " = 1.0 / (" + dd + ");\n";
      out += "  " + std::string(decl(i, true)) + Y(i, true) + " = " + b + " * r" + str(i) + ";\n";
      if (i > 0)
        out += "  const double f" + str(i) + " = " + num(g[i]) + " * r" + str(i) + ";\n";
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) { // forward: x = y + f x_p
    const int i = *it;
    if (i > 0)
      out += "  " + Y(i, true) + " = fma(" +
             (dconst[i] ? num(fconst[i]) : "f" + str(i)) + ", " + Y(parent[i], true) + ", " +
             Y(i, true) + ");\n";
    out += "  " + V(i) + " = " + Y(i, true) + ";\n";
  }
  fprintf(f, "#include \"hh.h\"\n#include \"async_copy.cuh\"\n");
  fprintf(f, "static const int NHH = %d;\n", n_hh);
  // shared-memory slots per thread: y (variant 0); v, y, x and the hh state (variant 1)
  fprintf(f, "static const int SLOTS = %d;\n", variant == 1 ? n + 3 * n_hh : n);
  fprintf(f, "%s", R"(__host__ __device__ static inline void se_stream_hh(double v, double *m, double *h,
    double *n, int update, double dt, double q10, double gnabar, double gkbar, double ena,
    double ek, double *b, double *dg) { // as src/neurons_stream.h
  if (update) se_hh_advance_gates(v, q10, dt, m, h, n);
  const double mm = *m, nn = *n, gna = gnabar * mm * mm * mm * *h, gk = gkbar * nn * nn * nn * nn;
  *b += gna * ena + gk * ek;
  *dg = gna + gk;
}
)");
  fprintf(f, "__host__ __device__ static inline void step_body(double *__restrict__ v, "
             "double *__restrict__ gm, double *__restrict__ gh, double *__restrict__ gn, "
             "const double *__restrict__ amp, double stim, int update, long c, int t, double *sy) "
             "{\n%s}\n", out.c_str());
  fprintf(f, "__global__ void __launch_bounds__(32) step(double *__restrict__ v, double *__restrict__ gm, "
             "double *__restrict__ gh, double *__restrict__ gn, const double *__restrict__ amp, "
             "double stim, int update) {\n  extern __shared__ double sy[];\n"
             "  const int t = threadIdx.x;\n  const long c = blockIdx.x * 32L + t;\n"
             "  if (c < S) step_body(v, gm, gh, gn, amp, stim, update, c, t, sy);\n}\n");
  fprintf(f, "static const int hp[N] = {%s};\nstatic const int hhi[N] = {%s};\n",
          list(parent).c_str(), list(hh_index).c_str());
  fprintf(f, "static const double ha[N] = {%s};\nstatic const double hc[N] = {%s};\n",
          list(a).c_str(), list(cst).c_str());
  fprintf(f, "static const double hdk[N] = {%s};\nstatic const double hg[N] = {%s};\n",
          list(dk).c_str(), list(g).c_str());
  fprintf(f, "static const double hgna[N] = {%s};\nstatic const double hgk[N] = {%s};\n",
          list(gna).c_str(), list(gk).c_str());
  fprintf(f, "static const double DT = %s;\n", num(dt).c_str());
  fprintf(f, "%s", R"(// The same step on the host in Hines order (rows n-1 .. 0), for one cell.
static void host_step(double *v, double *m, double *h, double *n, double amp, double stim, int update) {
  std::vector<double> b(N), d(N), f(N);
  for (int i = 0; i < N; i++) {
    double bx = 0.0, dg = 0.0;
    if (hhi[i] >= 0) se_stream_hh(v[i], &m[hhi[i]], &h[hhi[i]], &n[hhi[i]], update, DT, 1.0, hgna[i], hgk[i], 50.0, -77.0, &bx, &dg);
    b[i] = ha[i] * v[i] + hc[i] + bx + (i == 0 ? stim * amp : 0.0);
    d[i] = hdk[i] + dg;
  }
  for (int i = N - 1; i > 0; i--) {
    const double y = b[i] / d[i];
    f[i] = hg[i] / d[i];
    b[hp[i]] += hg[i] * y;
    d[hp[i]] -= hg[i] * f[i];
  }
  v[0] = b[0] / d[0];
  for (int i = 1; i < N; i++) v[i] = b[i] / d[i] + f[i] * v[hp[i]];
}
int main(int argc, char **argv) {
  const bool host_only = argc > 1 && !strcmp(argv[1], "--host"); // the kernel body on the host
  const double copy = host_only ? 0.0 : copy_bandwidth();
  std::vector<double> hv((size_t)N * S, -65.0), hm((size_t)NHH * S), hh_((size_t)NHH * S), hn((size_t)NHH * S), amp(S);
  const se_hh_rates r0 = se_hh_rates_at(-65.0, 1.0);
  std::fill(hm.begin(), hm.end(), r0.minf); std::fill(hh_.begin(), hh_.end(), r0.hinf); std::fill(hn.begin(), hn.end(), r0.ninf);
  for (long c = 0; c < S; c++) amp[c] = 0.2 + 0.3 * (double)(c % 7) / 7.0;
  const long cells[3] = {0, 1, S - 1};
  if (host_only) {
    std::vector<double> sy((size_t)SLOTS * 32), cv(N), cm_(NHH + 1), ch(NHH + 1), cn(NHH + 1);
    double dv = 0.0, vmax = -1e9;
    for (int k = 0; k < 3; k++) {
      std::fill(cv.begin(), cv.end(), -65.0); std::fill(cm_.begin(), cm_.end(), r0.minf);
      std::fill(ch.begin(), ch.end(), r0.hinf); std::fill(cn.begin(), cn.end(), r0.ninf);
      for (int s = 0; s < 400; s++) { // 10 ms: spikes
        const double stim = (s + 0.5) * DT >= 0.1 ? 1.0 : 0.0;
        step_body(hv.data(), hm.data(), hh_.data(), hn.data(), amp.data(), stim, s > 0, cells[k], (int)(cells[k] % 32), sy.data());
        host_step(cv.data(), cm_.data(), ch.data(), cn.data(), amp[cells[k]], stim, s > 0);
        for (int i = 0; i < N; i++) { dv = std::max(dv, std::fabs(hv[(size_t)i * S + cells[k]] - cv[i])); vmax = std::max(vmax, cv[i]); }
      }
    }
    printf("step --host: 400 steps of three cells, max |dv| %.2e mV (v max %.1f mV)\n", dv, vmax);
    return dv < 1e-6 ? 0 : 1;
  }
  double *v, *m, *h, *n, *am;
  CK(cudaMalloc(&v, hv.size() * 8)); CK(cudaMalloc(&m, hm.size() * 8 + 8)); CK(cudaMalloc(&h, hm.size() * 8 + 8));
  CK(cudaMalloc(&n, hm.size() * 8 + 8)); CK(cudaMalloc(&am, S * 8));
  CK(cudaMemcpy(v, hv.data(), hv.size() * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(m, hm.data(), hm.size() * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(h, hh_.data(), hm.size() * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(n, hn.data(), hm.size() * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(am, amp.data(), S * 8, cudaMemcpyHostToDevice));
  const int smem = SLOTS * 32 * 8;
  CK(cudaFuncSetAttribute(step, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const unsigned blocks = (unsigned)((S + 31) / 32);
  // the host copies of three cells
  std::vector<std::vector<double>> cv(3), cm_(3), ch(3), cn(3);
  for (int k = 0; k < 3; k++) {
    cv[k].assign(N, -65.0); cm_[k].assign(NHH + 1, r0.minf); ch[k].assign(NHH + 1, r0.hinf); cn[k].assign(NHH + 1, r0.ninf);
  }
  cudaEvent_t a, z; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&z));
  const int warm = 5, timed = 20;
  for (int s = 0; s < warm + timed; s++) {
    if (s == warm) CK(cudaEventRecord(a));
    const double stim = (s + 0.5) * DT >= 0.1 ? 1.0 : 0.0; // the clamp from 0.1 ms on
    step<<<blocks, 32, smem>>>(v, m, h, n, am, stim, s > 0);
    CK(cudaGetLastError());
    for (int k = 0; k < 3; k++) host_step(cv[k].data(), cm_[k].data(), ch[k].data(), cn[k].data(), amp[cells[k]], stim, s > 0);
  }
  CK(cudaEventRecord(z)); CK(cudaEventSynchronize(z));
  float ms; CK(cudaEventElapsedTime(&ms, a, z));
  CK(cudaMemcpy(hv.data(), v, hv.size() * 8, cudaMemcpyDeviceToHost));
  double dv = 0.0, vmax = -1e9;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < N; i++) { dv = std::max(dv, std::fabs(hv[(size_t)i * S + cells[k]] - cv[k][i])); vmax = std::max(vmax, cv[k][i]); }
  double floor_bytes = 0.0;
  for (int i = 0; i < N; i++) floor_bytes += hhi[i] >= 0 ? 64.0 : 16.0;
  floor_bytes *= (double)S;
  const double per = ms / timed, comp = (double)N * S, floor_ms = floor_bytes / (copy * 1e9) * 1e3;
  printf("step: %d rows (%d hh), %ld cells, copy %.1f GB/s\n", N, NHH, S, copy);
  printf("  %9.4f ms per step  %.5f ns/comp-step  floor %.5f ns  %.2fx the floor  max |dv| %.2e mV (v max %.1f mV)\n",
         per, per * 1e6 / comp, floor_ms * 1e6 / comp, per / floor_ms, dv, vmax);
  return 0;
}
)");
  fclose(f);
  return 0;
}
