/* A real MPI program for the Intel MPI tests (tests/tests/impi.rs): every
 * rank joins MPI_Init through its launcher's PMI connection (PMI_FD, a
 * socket it inherits), sums one per rank over the world, and says so. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size, sum = 0, one = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d: sum %d\n", rank, size, sum);
    MPI_Finalize();
    return sum == size ? 0 : 1;
}
