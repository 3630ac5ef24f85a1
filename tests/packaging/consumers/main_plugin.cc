// SPDX-License-Identifier: MIT
// Calls the plugin (a shared object linked with leanchan).
#include <cstdio>

extern "C" long plugin_sum(int count);

int main() {
  const long sum = plugin_sum(100);
  std::printf("plugin consumer received sum=%ld\n", sum);
  return sum == 5050 ? 0 : 1;
}
