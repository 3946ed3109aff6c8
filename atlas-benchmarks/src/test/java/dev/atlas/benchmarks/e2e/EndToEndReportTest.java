package dev.atlas.benchmarks.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class EndToEndReportTest {

	@TempDir
	Path dir;

	@Test
	void ratiosAreMediansOfThePerRoundRatiosOfAtlasOverPlain() throws IOException {
		round("rest-client", 1, "A", 900, "1.00ms", "2.00ms", "4.00ms", 9_000, 0, 9_000_000_000L);
		round("rest-client", 1, "B", 1000, "900.00us", "2.00ms", "3.00ms", 10_000, 0, 9_000_000_000L);
		round("rest-client", 2, "A", 950, "1.00ms", "2.00ms", "4.00ms", 9_500, 3, 9_500_000_000L);
		round("rest-client", 2, "B", 1000, "1.00ms", "2.00ms", "0.004s", 10_000, 0, 10_000_000_000L);

		String report = EndToEndReport.markdown(this.dir);

		// req/s: 0.900 and 0.950; p50: 1.111 and 1.000; p99: 1.333 and 1.000; CPU µs/req:
		// A 1000 and 1000, B 900 and 1000 -> 1.111 and 1.000
		assertThat(report)
			.contains("| rest-client | 925 / 1000 | 0.925 (0.900–0.950) | 1.056 (1.000–1.111) | 1.000 (1.000–1.000) "
					+ "| 1.167 (1.000–1.333) | 1000.0 / 950.0 | 1.056 (1.000–1.111) | 3 / 0 |");
		assertThat(report).contains("| rest-client | 1 | B | 1000 | 0.90 | 2.00 | 3.00 | 900.0 |");
	}

	@Test
	void roundsWithoutLatencyDistributionAreRejected() throws IOException {
		Files.writeString(this.dir.resolve("feign.r1.A.wrk"), "  10 requests in 1.00s\nRequests/sec: 10.0\n");

		assertThatIllegalArgumentException().isThrownBy(() -> EndToEndReport.markdown(this.dir))
			.withMessageContaining("--latency");
	}

	private void round(String target, int round, String side, double rps, String p50, String p90, String p99,
			long requests, long non2xx, long cpuNanos) throws IOException {
		String wrk = """
				Running 15s test @ http://127.0.0.1:1/orders/7
				  2 threads and 16 connections
				  Latency Distribution
				     50%%    %s
				     75%%    1.50ms
				     90%%    %s
				     99%%    %s
				  %d requests in 10.00s, 1.00MB read
				%sRequests/sec:   %.2f
				Transfer/sec:    100.00KB
				""".formatted(p50, p90, p99, requests,
				(non2xx > 0) ? "  Non-2xx or 3xx responses: " + non2xx + "\n" : "", rps);
		String name = target + ".r" + round + "." + side;
		Files.writeString(this.dir.resolve(name + ".wrk"), wrk);
		Files.writeString(this.dir.resolve(name + ".cpu"), "1000 " + (1000 + cpuNanos) + "\n");
	}

}
