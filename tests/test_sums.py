"""Sums the reports read are added one by one, left to right, in an order
fixed by the run (not by memory addresses or the Python version).

`sum()` of floats compensates its rounding from Python 3.12 on, and a set's
order follows object addresses, which differ from run to run; either would
change last digits of `work(S)` and of the flows' rates. With 2^53, 1 and 1
the order shows in the result: left to right, 2^53 + 1 rounds back to 2^53
(ties to even) twice; 1 + 1 + 2^53 is exact."""
import serq
from serq.core.numeric import seq_sum
from serq.runtime.sim.simulation import Simulation

BIG = 2.0 ** 53


def test_seq_sum_adds_left_to_right():
    assert seq_sum([BIG, 1.0, 1.0]) == BIG
    assert seq_sum([1.0, 1.0, BIG]) == BIG + 2.0
    assert seq_sum([]) == 0.0


SOURCE = """stage d : delay;
stage f : fifo(4);
workload { arrive poisson(1); session { turn; request; end; } }
server { run d (1); run f (1); observe w = work(d) + work(f); }
run { horizon 10; }
"""


def test_work_adds_jobs_in_the_order_they_started():
    for works, expected in (([BIG, 1.0, 1.0], BIG), ([1.0, 1.0, BIG], BIG + 2.0),
                            ([1.0, BIG, 1.0], BIG)):
        sim = Simulation(serq.load(source=SOURCE))
        for stage in sim.stage_list:  # a delay and a fifo(4): all in service at once
            assert stage.track_work
            for w in works:
                stage.request(None, w)
            assert stage.work() == expected, (type(stage).__name__, works)
