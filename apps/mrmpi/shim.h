// Declarations of shim.cpp, for the Go files of package mrmpi.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void *pgm_create(int memsize, const char *fpath);
void pgm_destroy(void *mr);
uint64_t pgm_map(void *mr, int n, uintptr_t h);
uint64_t pgm_compress(void *mr, uintptr_t h);
uint64_t pgm_collate(void *mr);
uint64_t pgm_reduce(void *mr, uintptr_t h);
uint64_t pgm_gather(void *mr, int procs);
uint64_t pgm_scan_kv(void *mr, uintptr_t h);
int pgm_multivalue_blocks(void *mr);
int pgm_multivalue_block(void *mr, int i, char **mv, int **valuebytes);
void pgm_kv_add(void *kv, char *key, int keybytes, char *value, int valuebytes);
void pgm_kv_add_multi(void *kv, int n, char *keys, int *keybytes, char *values, int *valuebytes);
int pgm_world(int *rank, int *size);
int pgm_failed(int mine);

#ifdef __cplusplus
}
#endif
