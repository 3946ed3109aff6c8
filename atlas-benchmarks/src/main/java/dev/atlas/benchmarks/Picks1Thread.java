package dev.atlas.benchmarks;

import org.openjdk.jmh.annotations.Threads;

/** {@link PickBenchmark} with one thread. */
@Threads(1)
public class Picks1Thread extends PickBenchmark {

}
