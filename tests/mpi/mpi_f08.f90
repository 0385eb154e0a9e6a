! The same kind of program with the Fortran 2008 bindings (`use mpi_f08`: handles are derived
! types, and Open MPI's module calls the ompi_*_f entry points): allreduce in and out of place,
! reduce, bcast, allgather in place, alltoall, gather and scatter, barrier on MPI_COMM_WORLD and
! a split, an iallreduce left to MPI. Prints DIGEST, EXPECT and REASON lines as
! mpi_collectives.c does (to $MPI_TEST_OUT/rank<r> when it is set) for run_mpi_test.sh.
program mpi_f08_test
  use mpi_f08
  implicit none
  integer :: rank, n, status, out, i
  type(MPI_Comm) :: half
  integer :: taken(14), total(14)
  character(len=20), parameter :: names(14) = [character(len=20) :: 'allreduce', 'bcast', &
       'reduce', 'allgather', 'allgatherv', 'reduce_scatter', 'reduce_scatter_block', &
       'alltoall', 'alltoallv', 'gather', 'scatter', 'barrier', 'iallreduce', 'ibcast']
  integer :: failures
  character(len=4096) :: out_dir

  taken = 0
  total = 0
  failures = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  out = 6
  call get_environment_variable('MPI_TEST_OUT', out_dir, status=status)
  if (status == 0) then
    out = 10
    block
      character(len=16) :: rank_text
      write (rank_text, '(i0)') rank
      open (unit=out, file=trim(out_dir)//'/rank'//trim(rank_text), status='replace', &
            action='write')
    end block
  end if
  call everything(MPI_COMM_WORLD, 'world')
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half)
  call everything(half, 'half')
  call MPI_Comm_free(half)
  do i = 1, 14
    if (total(i) > 0) write (out, '(a,i0,a,a,a,i0,a,i0)') 'EXPECT ', rank, ' ', trim(names(i)), &
         ' ', taken(i), ' ', total(i)
  end do
  if (out /= 6) close (out)
  call MPI_Finalize()
  if (failures > 0) call exit(1)

contains

  subroutine made(which, braid)
    integer, intent(in) :: which
    logical, intent(in) :: braid
    total(which) = total(which) + 1
    if (braid) taken(which) = taken(which) + 1
  end subroutine

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write (0, '(a,i0,a,a)') 'FAIL rank ', rank, ': ', what
    end if
  end subroutine

  subroutine everything(comm, name)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: name
    integer, parameter :: count = 500
    integer :: me, m, r, j
    integer, allocatable :: a(:), b(:)
    double precision :: x(count), y(count)
    type(MPI_Request) :: req
    integer(kind=8) :: h

    call MPI_Comm_rank(comm, me)
    call MPI_Comm_size(comm, m)
    allocate (a(count * m), b(count * m))
    do j = 1, count
      a(j) = me + j
      x(j) = dble(me * 3 + j)
    end do
    call MPI_Allreduce(a, b, count, MPI_INTEGER, MPI_SUM, comm)
    call made(1, .true.)
    call check(all(b(1:count) == [(m * j + m * (m - 1) / 2, j = 1, count)]), 'allreduce')
    y = x
    call MPI_Allreduce(MPI_IN_PLACE, y, count, MPI_DOUBLE_PRECISION, MPI_MAX, comm)
    call made(1, .true.)
    call check(all(y == [(dble((m - 1) * 3 + j), j = 1, count)]), 'allreduce in place')
    b(1:count) = -1
    call MPI_Reduce(a, b, count, MPI_INTEGER, MPI_MIN, m - 1, comm)
    call made(3, .true.)
    if (me == m - 1) call check(all(b(1:count) == [(j, j = 1, count)]), 'reduce')
    if (me == 0) then
      b(1:count) = 7
    else
      b(1:count) = 0
    end if
    call MPI_Bcast(b, count, MPI_INTEGER, 0, comm)
    call made(2, .true.)
    call check(all(b(1:count) == 7), 'bcast')
    b(me * count + 1:(me + 1) * count) = me + 100
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, count, MPI_INTEGER, comm)
    call made(4, .true.)
    do r = 0, m - 1
      call check(all(b(r * count + 1:(r + 1) * count) == r + 100), 'allgather in place')
    end do
    do r = 0, m - 1
      a(r * count + 1:(r + 1) * count) = me * 100 + r
    end do
    call MPI_Alltoall(a, count, MPI_INTEGER, b, count, MPI_INTEGER, comm)
    call made(8, .true.)
    do r = 0, m - 1
      call check(all(b(r * count + 1:(r + 1) * count) == r * 100 + me), 'alltoall')
    end do
    a(1:count) = me
    call MPI_Gather(a, count, MPI_INTEGER, b, count, MPI_INTEGER, 0, comm)
    call made(10, .true.)
    call MPI_Scatter(b, count, MPI_INTEGER, a, count, MPI_INTEGER, 0, comm)
    call made(11, .true.)
    call check(all(a(1:count) == me), 'gather then scatter')
    call MPI_Barrier(comm)
    call made(12, .true.)
    call MPI_Iallreduce(a, b, count, MPI_INTEGER, MPI_SUM, comm, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call made(13, .false.)
    write (out, '(a,i0,a)') 'REASON ', rank, ' iallreduce non-blocking'
    call check(all(b(1:count) == m * (m - 1) / 2), 'iallreduce')
    h = 0
    do j = 1, count
      h = mod(h * 31 + int(b(j), 8) + int(y(j), 8), 1000000007_8)
    end do
    write (out, '(a,i0,a,a,a,i0)') 'DIGEST ', rank, ' ', name, ' ', h
    deallocate (a, b)
  end subroutine

end program
