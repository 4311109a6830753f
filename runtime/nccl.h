/* nccl.h: NCCL, loaded at run time (dlopen of libnccl.so.2, or $TEGEN_NCCL_LIB), the few
 * calls tegen makes: in-place MAX all-reduces of float amaxes on a stream, grouped, and the
 * communicator helpers tegen.h offers host programs that include no NCCL header.
 * Without NCCL every call fails with a message naming what was looked for. */
#ifndef TEGEN_NCCL_H
#define TEGEN_NCCL_H

#include "cudrv.h"

#include <stddef.h>

/* nccl_load loads NCCL once; 0 when it is there, else -1 with the reason in err. */
int nccl_load(char *err, size_t errlen);
/* nccl_group_start / nccl_group_end bracket the all-reduces of one group (one launch). */
int nccl_group_start(char *err, size_t errlen);
int nccl_group_end(char *err, size_t errlen);
/* nccl_allreduce_max: count floats at buf replaced by their maximum over comm's ranks, on s. */
int nccl_allreduce_max(void *comm, CUdeviceptr buf, size_t count, CUstream s, char *err, size_t errlen);
/* nccl_unique_id writes a new 128-byte NCCL unique id (rank 0 makes it, every rank gets it). */
int nccl_unique_id(unsigned char id[128], char *err, size_t errlen);
/* nccl_comm_init joins the communicator of nranks ranks named by id as rank, on the current device. */
int nccl_comm_init(void **comm, int nranks, const unsigned char id[128], int rank, char *err, size_t errlen);
/* nccl_comm_destroy frees a communicator from nccl_comm_init (NULL: nothing). */
void nccl_comm_destroy(void *comm);
/* nccl_comm_size: the number of ranks of comm. */
int nccl_comm_size(void *comm, int *n, char *err, size_t errlen);

#endif
