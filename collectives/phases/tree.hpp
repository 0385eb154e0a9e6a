// Binomial trees over virtual ranks (v = (rank - root) mod n, the root is v = 0): the parent of
// v is v with its lowest set bit cleared; v's subtree is [v, v + lowbit(v)) clipped to n (the
// root's is everything). Reduce, gather and scatter walk the same tree.
#pragma once

namespace braid::coll {

struct Tree {
  int n;
  int root;
  int v;  // this rank's virtual rank

  Tree(int rank, int size, int root_) : n(size), root(root_), v((rank - root_ + size) % size) {}
  int real(int virt) const { return (virt + root) % n; }
  // lowbit(v), or the smallest power of two >= n for the root: the span of v's subtree.
  int span() const {
    if (v == 0) {
      int m = 1;
      while (m < n) m <<= 1;
      return m;
    }
    return v & -v;
  }
  int subtree_end() const { return v + span() < n ? v + span() : n; }
  int parent() const { return real(v - (v & -v)); }
};

}  // namespace braid::coll
