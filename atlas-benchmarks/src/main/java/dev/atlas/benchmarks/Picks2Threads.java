package dev.atlas.benchmarks;

import org.openjdk.jmh.annotations.Threads;

/** {@link PickBenchmark} with two threads sharing the load balancers. */
@Threads(2)
public class Picks2Threads extends PickBenchmark {

}
