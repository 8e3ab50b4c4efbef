"""Priority-aware eviction for the prefix cache.

With `evict lru`, the cached conversation of a premium session is evicted
as soon as it is the least recently used, like anyone else's. This policy
evicts in three tiers, least recently used first within each: entries of
sessions that have ended (nobody will reuse them), then those of standard
sessions, and a premium session's entry only when nothing else is left,
so premium sessions find their conversation cached more often.

    serq-simpy run examples/policies/prefix_cache_tiers.sq \\
        --policy kv=examples/policies/priority_eviction.py:PremiumLastEviction

`python examples/policies/priority_eviction.py` runs the program under LRU
and under this policy with the same seeds (paired replications) and compares the premium
sessions' cache hits (docs/policies.md has the numbers).
"""
from __future__ import annotations

from serq.policies import CacheEntry, Pool


class PremiumLastEviction(Pool):
    """`evict_victim`: the smallest (tier, last use, release order), where
    the tier is 0 for an entry whose session has ended, 1 for a standard
    session (`premium` 0) and 2 for a premium one."""

    def evict_victim(self, entries: list[CacheEntry]) -> CacheEntry:
        return min(entries, key=lambda e: (self.tier(e), e.last, e.rseq))

    @staticmethod
    def tier(entry: CacheEntry) -> int:
        """0: the owner ended; 1: a standard session; 2: a premium session."""
        owner = entry.session
        if owner is None or owner.ended:
            return 0
        return 1 + int(owner.attribute("premium"))


def main() -> None:
    """Compare LRU and premium-last eviction over 10 paired replications
    (seeds 1–10, the program's horizon; `serq.compare`)."""
    from compare import compare, print_comparison, program_path
    rows = compare(program_path("prefix_cache_tiers.sq"), {"kv": PremiumLastEviction},
                   ["premium_hit", "hit", "premium_response", "response"], seed=1)
    print_comparison("prefix_cache_tiers.sq: LRU vs premium-last eviction", rows)


if __name__ == "__main__":
    main()
