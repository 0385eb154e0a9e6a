! A plain Fortran MPI program (`use mpi`): every collective the library takes on MPI_COMM_WORLD,
! a dup, a split, a split_type and an idup, MPI_IN_PLACE included, results checked against
! values computed locally. Prints the same DIGEST and EXPECT lines as mpi_collectives.c for
! run_mpi_test.sh, to a file per rank in $MPI_TEST_OUT when it is set (as there: the launchers
! can splice lines of two ranks). MPI_TEST_THREAD_LEVEL=funneled starts it with MPI_Init_thread.
program mpi_fortran
  use mpi
  implicit none
  integer :: ierr, rank, n, dup, half, node, idup, req, i, provided
  integer :: taken(14), total(14)
  character(len=20), parameter :: names(14) = [character(len=20) :: 'allreduce', 'bcast', &
       'reduce', 'allgather', 'allgatherv', 'reduce_scatter', 'reduce_scatter_block', &
       'alltoall', 'alltoallv', 'gather', 'scatter', 'barrier', 'iallreduce', 'ibcast']
  integer :: failures, out, status
  character(len=4096) :: out_dir
  character(len=32) :: level

  taken = 0
  total = 0
  failures = 0
  call get_environment_variable('MPI_TEST_THREAD_LEVEL', level, status=status)
  if (status == 0 .and. trim(level) == 'funneled') then
    call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
    if (provided /= MPI_THREAD_FUNNELED) then
      write (0, '(a,i0)') 'FAIL: MPI_Init_thread(MPI_THREAD_FUNNELED) provided ', provided
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  else
    call MPI_Init(ierr)
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
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
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call everything(dup, 'dup')
  call MPI_Comm_split(dup, mod(rank, 2), -rank, half, ierr)
  call everything(half, 'half')
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node, ierr)
  call everything(node, 'node')
  call MPI_Comm_free(node, ierr)
  ! A non-blocking dup: braid mirrors it at its first collective.
  call MPI_Comm_idup(half, idup, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call everything(idup, 'idup')
  call MPI_Comm_free(idup, ierr)
  call MPI_Comm_free(half, ierr)
  call MPI_Comm_free(dup, ierr)
  do i = 1, 14
    if (total(i) > 0) write (out, '(a,i0,a,a,a,i0,a,i0)') 'EXPECT ', rank, ' ', trim(names(i)), &
         ' ', taken(i), ' ', total(i)
  end do
  if (out /= 6) close (out)
  call MPI_Finalize(ierr)
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
    integer, intent(in) :: comm
    character(len=*), intent(in) :: name
    integer :: me, m, r, j, root, count, req, at
    integer, allocatable :: a(:), b(:), want(:), counts(:), displs(:)
    double precision, allocatable :: x(:), y(:)
    real :: s(7), smin(7)
    integer(kind=8) :: h

    call MPI_Comm_rank(comm, me, ierr)
    call MPI_Comm_size(comm, m, ierr)
    count = 1000
    allocate (a(count * m), b(count * m), want(count * m), x(count), y(count), counts(m), &
              displs(m))
    ! allreduce, not in place and in place
    do j = 1, count
      a(j) = me + j
      x(j) = dble(me * 2 + j)
    end do
    call MPI_Allreduce(a, b, count, MPI_INTEGER, MPI_SUM, comm, ierr)
    call made(1, .true.)
    do j = 1, count
      want(j) = m * j + m * (m - 1) / 2
    end do
    call check(all(b(1:count) == want(1:count)), 'allreduce integer sum')
    y = x
    call MPI_Allreduce(MPI_IN_PLACE, y, count, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
    call made(1, .true.)
    do j = 1, count
      call check(y(j) == dble((m - 1) * 2 + j), 'allreduce in place double max')
    end do
    ! REAL min, INTEGER bitwise xor
    do j = 1, 7
      s(j) = real(mod(me * 5 + j, 9))
    end do
    call MPI_Allreduce(s, smin, 7, MPI_REAL, MPI_MIN, comm, ierr)
    call made(1, .true.)
    do j = 1, 7
      call check(smin(j) == real(minval([(mod(r * 5 + j, 9), r = 0, m - 1)])), 'allreduce real min')
    end do
    call MPI_Allreduce(a, b, count, MPI_INTEGER, MPI_BXOR, comm, ierr)
    call made(1, .true.)
    do j = 1, count
      want(j) = 0
      do r = 0, m - 1
        want(j) = ieor(want(j), r + j)
      end do
    end do
    call check(all(b(1:count) == want(1:count)), 'allreduce integer bxor')
    do j = 1, count
      want(j) = m * j + m * (m - 1) / 2
    end do
    ! reduce to rank 0, in place there (MPICH 4.0.2's own in-place reduce crashes at other roots)
    root = 0
    b(1:count) = a(1:count)
    if (me == root) then
      call MPI_Reduce(MPI_IN_PLACE, b, count, MPI_INTEGER, MPI_SUM, root, comm, ierr)
      call check(all(b(1:count) == want(1:count)), 'reduce in place')
    else
      call MPI_Reduce(a, b, count, MPI_INTEGER, MPI_SUM, root, comm, ierr)
    end if
    call made(3, .true.)
    ! bcast from rank 0
    if (me == 0) then
      b(1:count) = [(j * 3, j = 1, count)]
    else
      b(1:count) = -1
    end if
    call MPI_Bcast(b, count, MPI_INTEGER, 0, comm, ierr)
    call made(2, .true.)
    call check(all(b(1:count) == [(j * 3, j = 1, count)]), 'bcast')
    ! allgather in place: block r holds r * 10 + j
    do r = 0, m - 1
      if (r == me) b(r * count + 1:(r + 1) * count) = [(r * 10 + j, j = 1, count)]
    end do
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, count, MPI_INTEGER, comm, ierr)
    call made(4, .true.)
    do r = 0, m - 1
      call check(all(b(r * count + 1:(r + 1) * count) == [(r * 10 + j, j = 1, count)]), &
                 'allgather in place')
    end do
    ! allgatherv: rank r gives r + 1 elements r * 10 + j, placed from the last rank down
    at = 0
    do r = m - 1, 0, -1
      counts(r + 1) = r + 1
      displs(r + 1) = at
      at = at + r + 1
    end do
    a(1:me + 1) = [(me * 10 + j, j = 1, me + 1)]
    b = -1
    call MPI_Allgatherv(a, me + 1, MPI_INTEGER, b, counts, displs, MPI_INTEGER, comm, ierr)
    call made(5, .true.)
    do r = 0, m - 1
      call check(all(b(displs(r + 1) + 1:displs(r + 1) + r + 1) == [(r * 10 + j, j = 1, r + 1)]), &
                 'allgatherv')
    end do
    ! alltoallv: rank me sends d + 1 elements me * 100 + d to rank d
    at = 0
    do r = 0, m - 1
      a(at + 1:at + r + 1) = me * 100 + r
      counts(r + 1) = r + 1
      displs(r + 1) = at
      at = at + r + 1
    end do
    block
      integer :: rcounts(m), rdispls(m)
      rcounts = me + 1
      rdispls = [((r) * (me + 1), r = 0, m - 1)]
      call MPI_Alltoallv(a, counts, displs, MPI_INTEGER, b, rcounts, rdispls, MPI_INTEGER, comm, &
                         ierr)
      call made(9, .true.)
      do r = 0, m - 1
        call check(all(b(rdispls(r + 1) + 1:rdispls(r + 1) + me + 1) == r * 100 + me), 'alltoallv')
      end do
    end block
    ! alltoall: block d of rank me = me * 100 + d
    do r = 0, m - 1
      a(r * count + 1:(r + 1) * count) = me * 100 + r
    end do
    call MPI_Alltoall(a, count, MPI_INTEGER, b, count, MPI_INTEGER, comm, ierr)
    call made(8, .true.)
    do r = 0, m - 1
      call check(all(b(r * count + 1:(r + 1) * count) == r * 100 + me), 'alltoall')
    end do
    ! reduce_scatter_block in place
    do j = 1, count * m
      b(j) = me + j
    end do
    call MPI_Reduce_scatter_block(MPI_IN_PLACE, b, count, MPI_INTEGER, MPI_SUM, comm, ierr)
    call made(7, .true.)
    call check(all(b(1:count) == [(m * (me * count + j) + m * (m - 1) / 2, j = 1, count)]), &
               'reduce_scatter_block in place')
    ! reduce_scatter, every count the same
    do j = 1, count * m
      a(j) = me + j
    end do
    counts = count
    call MPI_Reduce_scatter(a, b, counts, MPI_INTEGER, MPI_SUM, comm, ierr)
    call made(6, .true.)
    call check(all(b(1:count) == [(m * (me * count + j) + m * (m - 1) / 2, j = 1, count)]), &
               'reduce_scatter')
    ! gather to rank 0, scatter back
    a(1:count) = me
    call MPI_Gather(a, count, MPI_INTEGER, b, count, MPI_INTEGER, 0, comm, ierr)
    call made(10, .true.)
    if (me == 0) then
      do r = 0, m - 1
        call check(all(b(r * count + 1:(r + 1) * count) == r), 'gather')
      end do
    end if
    call MPI_Scatter(b, count, MPI_INTEGER, a, count, MPI_INTEGER, 0, comm, ierr)
    call made(11, .true.)
    call check(all(a(1:count) == me), 'scatter')
    call MPI_Barrier(comm, ierr)
    call made(12, .true.)
    ! non-blocking: left to MPI
    call MPI_Iallreduce(a, b, count, MPI_INTEGER, MPI_SUM, comm, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call made(13, .false.)
    write (out, '(a,i0,a)') 'REASON ', rank, ' iallreduce non-blocking'

    call check(all(b(1:count) == m * (m - 1) / 2), 'iallreduce')
    if (me == 0) b(1:count) = 42
    call MPI_Ibcast(b, count, MPI_INTEGER, 0, comm, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call made(14, .false.)
    call check(all(b(1:count) == 42), 'ibcast')
    call MPI_Allreduce(a, b, count, MPI_INTEGER, MPI_SUM, comm, ierr)
    call made(1, .true.)
    ! one digest of the results on this rank
    h = 0
    do j = 1, count
      h = mod(h * 31 + int(b(j), 8) + int(y(j), 8), 1000000007_8)
    end do
    write (out, '(a,i0,a,a,a,i0)') 'DIGEST ', rank, ' ', name, ' ', h
    deallocate (a, b, want, x, y, counts, displs)
  end subroutine

end program
