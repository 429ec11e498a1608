#include <cstdio>
int main() { std::puts("streamlens: under construction"); return 0; }
