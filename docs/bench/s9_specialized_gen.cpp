// Session 9 experiment generator (not part of the engine; docs/gpu.md "Session 9", proposal).
//
// Writes one standalone CUDA program per morphology: the Hines solve of a population of cells of
// that morphology, one thread per cell, with the tree compiled into the code (no row table). The
// pivots are constant (PLAIN rows: the matrix is the morphology's, as for the passive rows of the
// time step), so the elimination constants are immediates; only b (the right-hand side) is read
// and x written, 16 B per compartment, interleaved (row i of cell c at i * S + c). Two kernels:
//   reg   every row's y a local variable (the compiler keeps what it can in registers)
//   smem  y in shared memory [row][thread], the last R rows of the backward order (the first the
//         forward sweep needs) in registers
// Rows are emitted in the order of a list schedule with V virtual lanes (deepest ready row first,
// a lane continuing its chain), so that independent branches interleave.
//
// The program measures the device copy bandwidth, times each kernel (CUDA events, median of 20
// after a warm-up) at S cells (a constant of the generated code) and checks x against a host solve
// of the same system on three cells.
// Usage (parents from docs/bench/s9_spec_parents.txt):
//   g++ -O2 -o gen docs/bench/s9_specialized_gen.cpp
//   ./gen docs/bench/s9_spec_parents.txt medium-high spec.cu [V] [R] [W] [S]
// (W: a compiler barrier every W rows, so that ptxas does not hoist every load to the start; S:
// the cells, a constant of the code so that each row's offset i S is an immediate: with S a
// kernel argument ptxas kept the 64-bit row addresses in registers and spilled)
//   nvcc -O3 -arch=sm_90 -Xptxas -v spec.cu -o spec && ./spec
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s PARENTS.txt NAME OUT.cu [lanes 4] [register rows 64] [window 16] "
            "[cells 256000]\n",
            argv[0]);
    return 2;
  }
  const std::string name = argv[2];
  const int lanes = argc > 4 ? atoi(argv[4]) : 4, reg_rows = argc > 5 ? atoi(argv[5]) : 64;
  const int window = argc > 6 ? atoi(argv[6]) : 16;
  const long cells = argc > 7 ? atol(argv[7]) : 256000;
  std::ifstream in(argv[1]);
  std::string line;
  std::vector<int> parent;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string cls;
    int n = 0;
    if (line.empty() || line[0] == '#' || !(ls >> cls >> n) || cls != name)
      continue;
    parent.resize(n);
    for (int &p : parent)
      ls >> p;
  }
  const int n = (int)parent.size();
  if (n == 0) {
    fprintf(stderr, "%s: no class '%s' in %s\n", argv[0], name.c_str(), argv[1]);
    return 1;
  }
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
  std::vector<std::vector<int>> kids(n);
  for (int c = 1; c < n; c++)
    kids[parent[c]].push_back(c);
  const std::vector<int> order = list_order(parent, lanes);
  std::vector<char> in_reg(n, 0);
  for (int k = std::max(0, n - reg_rows); k < n; k++)
    in_reg[order[k]] = 1;

  auto body = [&](bool smem) {
    auto Y = [&](int i) {
      return (!smem || in_reg[i]) ? "y" + std::to_string(i) : "sy[" + std::to_string(i) + " * 32 + t]";
    };
    std::string out;
    int emitted = 0;
    // a compiler barrier every `window` rows keeps ptxas from hoisting every b load to the start
    // (registers); window 0: none
    auto fence = [&] {
      if (window > 0 && ++emitted % window == 0)
        out += "  asm volatile(\"\" ::: \"memory\");\n";
    };
    for (int i : order) { // backward: r = b - sum u_c y_c, y = r / d'
      fence();
      std::string e = "__ldg(b + (long)" + std::to_string(i) + " * S + c)";
      for (int k : kids[i])
        e = "fma(" + num(-u[k]) + ", " + Y(k) + ", " + e + ")";
      out += std::string("  ") + ((!smem || in_reg[i]) ? "double " : "") + Y(i) + " = (" + e +
             ") * " + num(1.0 / dp[i]) + ";\n";
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) { // forward, parents first
      const int i = *it;
      fence();
      if (i > 0)
        out += "  " + Y(i) + " = fma(" + num(-l[i] / dp[i]) + ", " + Y(parent[i]) + ", " + Y(i) + ");\n";
      out += "  x[(long)" + std::to_string(i) + " * S + c] = " + Y(i) + ";\n";
    }
    return out;
  };
  auto list = [&](const std::vector<double> &a) {
    std::string s;
    for (int i = 0; i < n; i++)
      s += (i ? ", " : "") + num(a[i]);
    return s;
  };
  std::string ps;
  for (int i = 0; i < n; i++)
    ps += (i ? ", " : "") + std::to_string(parent[i]);
  FILE *f = fopen(argv[3], "w");
  if (!f) {
    perror(argv[3]);
    return 1;
  }
  fprintf(f, "// Generated by docs/bench/s9_specialized_gen.cpp for %s (%d rows, %d virtual lanes,\n"
             "// %d register rows in the smem kernel). Experiment only (docs/gpu.md \"Session 9\").\n",
          name.c_str(), n, lanes, std::min(n, reg_rows));
  fprintf(f, "%s", R"(#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
)");
  fprintf(f, "static const int N = %d;\nstatic const long S = %ld;\n", n, cells);
  fprintf(f, "__global__ void __launch_bounds__(32) solve_reg(const double *__restrict__ b, "
             "double *__restrict__ x) {\n  const long c = blockIdx.x * 32L + threadIdx.x;\n"
             "  if (c >= S) return;\n%s}\n", body(false).c_str());
  fprintf(f, "__global__ void __launch_bounds__(32) solve_smem(const double *__restrict__ b, "
             "double *__restrict__ x) {\n  extern __shared__ double sy[];\n"
             "  const int t = threadIdx.x;\n  const long c = blockIdx.x * 32L + t;\n"
             "  if (c >= S) return;\n%s}\n", body(true).c_str());
  fprintf(f, "static const double hu[N] = {%s};\nstatic const double hl[N] = {%s};\n"
             "static const double hd[N] = {%s};\nstatic const int hp[N] = {%s};\n",
          list(u).c_str(), list(l).c_str(), list(d).c_str(), ps.c_str());
  fprintf(f, "%s", R"(static void host_solve(std::vector<double> &r) {
  std::vector<double> dd(hd, hd + N);
  for (int i = N - 1; i > 0; i--) { double f = hu[i] / dd[i]; dd[hp[i]] -= f * hl[i]; r[hp[i]] -= f * r[i]; }
  r[0] /= dd[0];
  for (int i = 1; i < N; i++) r[i] = (r[i] - hl[i] * r[hp[i]]) / dd[i];
}
template <class K> static float timed(K k, int reps) {
  cudaEvent_t a, z; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&z));
  std::vector<float> ms;
  k();
  for (int r = 0; r < reps; r++) {
    CK(cudaEventRecord(a)); k(); CK(cudaEventRecord(z)); CK(cudaEventSynchronize(z));
    float m; CK(cudaEventElapsedTime(&m, a, z)); ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
int main() {
  const size_t bytes = (size_t)N * S * sizeof(double);
  double *b, *x, *c1, *c2;
  CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&x, bytes));
  const size_t cb = 1ull << 31;
  CK(cudaMalloc(&c1, cb)); CK(cudaMalloc(&c2, cb));
  const float cm = timed([&] { CK(cudaMemcpy(c2, c1, cb, cudaMemcpyDeviceToDevice)); }, 5);
  const double copy = 2.0 * cb / (cm * 1e-3) / 1e9;
  std::vector<double> hb((size_t)N * S);
  for (size_t k = 0; k < hb.size(); k++) hb[k] = std::sin(0.001 * (double)k) + 0.5;
  CK(cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice));
  const int smem = N * 32 * 8;
  CK(cudaFuncSetAttribute(solve_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  printf("%d rows, %ld cells, copy %.1f GB/s\n", N, S, copy);
  for (int v = 0; v < 2; v++) {
    const unsigned blocks = (unsigned)((S + 31) / 32);
    const float ms = timed([&] {
      if (v == 0) solve_reg<<<blocks, 32>>>(b, x);
      else solve_smem<<<blocks, 32, smem>>>(b, x);
      CK(cudaGetLastError());
    }, 20);
    std::vector<double> hx((size_t)N * S);
    CK(cudaMemcpy(hx.data(), x, bytes, cudaMemcpyDeviceToHost));
    double err = 0;
    for (long cell : {0L, 1L, S - 1}) {
      std::vector<double> r(N);
      for (int i = 0; i < N; i++) r[i] = hb[(size_t)i * S + cell];
      host_solve(r);
      double num = 0, den = 0;
      for (int i = 0; i < N; i++) { double dx = hx[(size_t)i * S + cell] - r[i]; num += dx * dx; den += r[i] * r[i]; }
      err = std::max(err, std::sqrt(num / den));
    }
    const double comp = (double)N * S, gbs = 16.0 * comp / (ms * 1e-3) / 1e9;
    printf("  %-5s %9.4f ms  %.5f ns/comp  %7.1f GB/s@16B  %5.1f%% of copy  rel.err %.2e\n",
           v == 0 ? "reg" : "smem", ms, ms * 1e6 / comp, gbs, 100.0 * gbs / copy, err);
  }
  return 0;
}
)");
  fclose(f);
  return 0;
}
