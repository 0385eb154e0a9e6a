! A plain Fortran MPI program (`use mpi`): collectives on MPI_COMM_WORLD, a dup, a split and an idup,
! MPI_IN_PLACE included, results checked against values computed locally. Prints the same
! DIGEST and EXPECT lines as mpi_collectives.c for run_mpi_test.sh, to a file per rank in
! $MPI_TEST_OUT when it is set (as there: the launchers can splice lines of two ranks).
program mpi_fortran
  use mpi
  implicit none
  integer :: ierr, rank, n, dup, half, idup, req, i
  integer :: taken(14), total(14)
  character(len=20), parameter :: names(14) = [character(len=20) :: 'allreduce', 'bcast', &
       'reduce', 'allgather', 'allgatherv', 'reduce_scatter', 'reduce_scatter_block', &
       'alltoall', 'alltoallv', 'gather', 'scatter', 'barrier', 'iallreduce', 'ibcast']
  integer :: failures, out, status
  character(len=4096) :: out_dir

  taken = 0
  total = 0
  failures = 0
  call MPI_Init(ierr)
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
    integer :: me, m, r, j, root, count, req
    integer, allocatable :: a(:), b(:), want(:)
    double precision, allocatable :: x(:), y(:)
    integer(kind=8) :: h

    call MPI_Comm_rank(comm, me, ierr)
    call MPI_Comm_size(comm, m, ierr)
    count = 1000
    allocate (a(count * m), b(count * m), want(count * m), x(count), y(count))
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
    call check(all(b(1:count) == m * (m - 1) / 2), 'iallreduce')
    ! one digest of the results on this rank
    h = 0
    do j = 1, count
      h = mod(h * 31 + int(b(j), 8) + int(y(j), 8), 1000000007_8)
    end do
    write (out, '(a,i0,a,a,a,i0)') 'DIGEST ', rank, ' ', name, ' ', h
    deallocate (a, b, want, x, y)
  end subroutine

end program
