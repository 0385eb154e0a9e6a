#!/usr/bin/perl
# udp-link.pl LPORT RPORT BYTES -- cmd...: a UDP socket on 127.0.0.1:LPORT connected to
# 127.0.0.1:RPORT with BYTES of receive and send buffer, left open across exec of cmd, whose
# arguments have @FD@ replaced by its descriptor number.
use strict;
use warnings;
use Socket qw(AF_INET SOCK_DGRAM SOL_SOCKET pack_sockaddr_in inet_aton);
use Fcntl qw(F_GETFD F_SETFD FD_CLOEXEC);
my ($lport, $rport, $bytes, $sep, @cmd) = @ARGV;
die "usage: udp-link.pl LPORT RPORT BYTES -- cmd...\n" unless defined $sep && $sep eq '--' && @cmd;
socket(my $s, AF_INET, SOCK_DGRAM, 0) or die "udp-link: socket: $!\n";
# SO_RCVBUFFORCE (33) and SO_SNDBUFFORCE (32): past net.core.[rw]mem_max, as root.
for my $opt (33, 32) {
  setsockopt($s, SOL_SOCKET, $opt, pack('i', $bytes)) or die "udp-link: buffer size $bytes: $!\n";
}
bind($s, pack_sockaddr_in($lport, inet_aton('127.0.0.1'))) or die "udp-link: bind 127.0.0.1:$lport: $!\n";
connect($s, pack_sockaddr_in($rport, inet_aton('127.0.0.1'))) or die "udp-link: connect :$rport: $!\n";
my $flags = fcntl($s, F_GETFD, 0) or die "udp-link: fcntl: $!\n";
fcntl($s, F_SETFD, $flags & ~FD_CLOEXEC) or die "udp-link: fcntl: $!\n";
my $fd = fileno($s);
s/\@FD\@/$fd/g for @cmd;
exec { $cmd[0] } @cmd or die "udp-link: exec $cmd[0]: $!\n";
