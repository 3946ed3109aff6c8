package dev.atlas.benchmarks;

import java.util.Collection;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Smoke mode for CI: every benchmark, every size, both thread counts, in-process (no
 * fork), no warmup and one 10 ms measurement each, with {@code -prof gc}; then the
 * Markdown report. The figures mean nothing; the point is that every benchmark runs and
 * the report renders. Takes well under a minute.
 */
class BenchmarkSmokeTest {

	@Test
	void everyBenchmarkRunsAndTheReportRenders() throws Exception {
		// JMH refuses to start while another JMH run holds /tmp/jmh.lock (e.g. run.sh on
		// the same machine); the
		// smoke pass measures nothing, so it must not fail for that.
		String ignoreLock = System.setProperty("jmh.ignoreLock", "true");
		Collection<RunResult> results;
		try {
			results = new Runner(new OptionsBuilder().include("dev\\.atlas\\.benchmarks\\..*")
				.forks(0)
				.warmupIterations(0)
				.measurementIterations(1)
				.measurementTime(TimeValue.milliseconds(10))
				.timeout(TimeValue.seconds(30))
				.timeUnit(TimeUnit.NANOSECONDS)
				.addProfiler(GCProfiler.class)
				.shouldFailOnError(true)
				.build()).run();
		}
		finally {
			if (ignoreLock == null) {
				System.clearProperty("jmh.ignoreLock");
			}
			else {
				System.setProperty("jmh.ignoreLock", ignoreLock);
			}
		}
		MarkdownReport report = MarkdownReport.of(results);
		assertThat(report.missing()).isEmpty();
		assertThat(report.size()).isEqualTo(MarkdownReport.Contender.values().length * 4 * 2);
		String markdown = report.render();
		System.out.println(markdown);
		assertThat(markdown).contains("Time per pick, 1 thread", "Time per pick, 2 threads", "Allocation per pick",
				"Done-when targets", "| Atlas full chain, no tag (10 % canary) |");
	}

}
