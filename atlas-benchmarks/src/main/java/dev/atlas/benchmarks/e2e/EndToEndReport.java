package dev.atlas.benchmarks.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Turns the rounds that {@code atlas-benchmarks/e2e.sh} recorded into Markdown: per
 * target (a client of order-service, or the gateway), Atlas's side (A) against plain
 * Spring Cloud LoadBalancer's (B) as ratios A ÷ B of requests per second, p50/p90/p99
 * latency and the caller's CPU time per request, each the median of the per-round ratios
 * (A and B of the same round, measured one after the other) with their range.
 *
 * <p>
 * A round is two files named {@code TARGET.rROUND.SIDE.wrk} (side {@code A} or {@code B};
 * wrk's output with {@code --latency}) and {@code ….cpu} (the caller JVM's
 * {@code process.cpu.time} in ns before and after the round, space-separated);
 * {@code run.txt}, when present, is copied at the top as the run's description.
 */
public final class EndToEndReport {

	private static final Pattern ROUND = Pattern.compile("(.+)\\.r(\\d+)\\.([AB])\\.wrk");

	private static final Pattern RPS = Pattern.compile("Requests/sec:\\s+([\\d.]+)");

	private static final Pattern REQUESTS = Pattern.compile("(\\d+) requests in");

	private static final Pattern PERCENTILE = Pattern.compile("^\\s+(50|90|99)%\\s+([\\d.]+)(us|ms|s)\\s*$",
			Pattern.MULTILINE);

	private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");

	private static final Pattern SOCKET_ERRORS = Pattern
		.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

	private EndToEndReport() {
	}

	/**
	 * Prints the report of a run.
	 * @param args one argument: the directory of the rounds
	 * @throws IOException when the directory cannot be read
	 */
	public static void main(String[] args) throws IOException {
		if (args.length != 1) {
			System.err.println("usage: EndToEndReport <rounds directory>");
			System.exit(2);
		}
		System.out.print(markdown(Path.of(args[0])));
	}

	/**
	 * The report of a run.
	 * @param dir the directory of the rounds
	 * @return the report, in Markdown
	 * @throws IOException when the directory cannot be read
	 * @throws IllegalArgumentException when a round's files are incomplete
	 */
	static String markdown(Path dir) throws IOException {
		Map<String, Map<Integer, Map<String, Round>>> byTarget = rounds(dir);
		StringBuilder out = new StringBuilder();
		Path description = dir.resolve("run.txt");
		if (Files.exists(description)) {
			for (String line : Files.readAllLines(description)) {
				out.append(line.replaceFirst("^# ?", "")).append("  \n");
			}
			out.append('\n');
		}
		out.append("| target | req/s Atlas / plain | × req/s | × p50 | × p90 | × p99 "
				+ "| caller CPU µs/req Atlas / plain | × CPU | errors A / B |\n");
		out.append("|---|---|---|---|---|---|---|---|---|\n");
		StringBuilder rounds = new StringBuilder();
		rounds.append("| target | round | side | req/s | p50 ms | p90 ms | p99 ms | CPU µs/req |\n");
		rounds.append("|---|---|---|---|---|---|---|---|\n");
		for (Map.Entry<String, Map<Integer, Map<String, Round>>> target : byTarget.entrySet()) {
			List<Round[]> pairs = new ArrayList<>();
			for (Map.Entry<Integer, Map<String, Round>> round : target.getValue().entrySet()) {
				Round a = round.getValue().get("A");
				Round b = round.getValue().get("B");
				for (Map.Entry<String, Round> side : round.getValue().entrySet()) {
					Round r = side.getValue();
					rounds.append(String.format(Locale.ROOT, "| %s | %d | %s | %.0f | %.2f | %.2f | %.2f | %s |%n",
							target.getKey(), round.getKey(), side.getKey(), r.rps, r.p50, r.p90, r.p99,
							Double.isNaN(r.cpuMicrosPerRequest()) ? "–"
									: String.format(Locale.ROOT, "%.1f", r.cpuMicrosPerRequest())));
				}
				if (a != null && b != null) {
					pairs.add(new Round[] { a, b });
				}
			}
			if (pairs.isEmpty()) {
				continue;
			}
			out.append(String.format(Locale.ROOT, "| %s | %.0f / %.0f | %s | %s | %s | %s | %s | %s | %d / %d |%n",
					target.getKey(), median(pairs, (p) -> p[0].rps), median(pairs, (p) -> p[1].rps),
					ratio(pairs, (r) -> r.rps), ratio(pairs, (r) -> r.p50), ratio(pairs, (r) -> r.p90),
					ratio(pairs, (r) -> r.p99), cpu(pairs), ratio(pairs, Round::cpuMicrosPerRequest),
					pairs.stream().mapToLong((p) -> p[0].errors).sum(),
					pairs.stream().mapToLong((p) -> p[1].errors).sum()));
		}
		out.append("\n× = Atlas ÷ plain Spring Cloud LoadBalancer: median of the per-round ratios (range). ")
			.append("Rounds:\n\n")
			.append(rounds);
		return out.toString();
	}

	/**
	 * The rounds of a run.
	 * @param dir the directory of the rounds
	 * @return by target, then round number, then side ({@code A} or {@code B}), in file
	 * name order
	 * @throws IOException when a file cannot be read
	 * @throws IllegalArgumentException when a round's files are incomplete
	 */
	static Map<String, Map<Integer, Map<String, Round>>> rounds(Path dir) throws IOException {
		Map<String, Map<Integer, Map<String, Round>>> byTarget = new LinkedHashMap<>();
		List<Path> files;
		try (Stream<Path> listing = Files.list(dir)) {
			files = listing.sorted().toList();
		}
		for (Path file : files) {
			Matcher name = ROUND.matcher(file.getFileName().toString());
			if (name.matches()) {
				Path cpu = file.resolveSibling(file.getFileName().toString().replace(".wrk", ".cpu"));
				Round round = Round.read(file, Files.exists(cpu) ? cpu : null);
				byTarget.computeIfAbsent(name.group(1), (t) -> new LinkedHashMap<>())
					.computeIfAbsent(Integer.parseInt(name.group(2)), (r) -> new LinkedHashMap<>())
					.put(name.group(3), round);
			}
		}
		return byTarget;
	}

	private static String cpu(List<Round[]> pairs) {
		double a = median(pairs, (p) -> p[0].cpuMicrosPerRequest());
		double b = median(pairs, (p) -> p[1].cpuMicrosPerRequest());
		return (Double.isNaN(a) || Double.isNaN(b)) ? "–" : String.format(Locale.ROOT, "%.1f / %.1f", a, b);
	}

	private static String ratio(List<Round[]> pairs, ToDoubleFunction<Round> value) {
		List<Double> ratios = pairs.stream()
			.map((p) -> value.applyAsDouble(p[0]) / value.applyAsDouble(p[1]))
			.filter((r) -> !r.isNaN() && !r.isInfinite())
			.sorted()
			.toList();
		if (ratios.isEmpty()) {
			return "–";
		}
		return String.format(Locale.ROOT, "%.3f (%.3f–%.3f)", median(ratios), ratios.get(0),
				ratios.get(ratios.size() - 1));
	}

	private static double median(List<Round[]> pairs, ToDoubleFunction<Round[]> value) {
		return median(pairs.stream().map(value::applyAsDouble).filter((v) -> !v.isNaN()).sorted().toList());
	}

	/** The median of values in ascending order; {@code NaN} when there is none. */
	static double median(List<Double> sorted) {
		if (sorted.isEmpty()) {
			return Double.NaN;
		}
		int middle = sorted.size() / 2;
		return (sorted.size() % 2 == 1) ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
	}

	/**
	 * One side of one round.
	 *
	 * @param rps requests per second
	 * @param requests requests completed
	 * @param p50 median latency, ms
	 * @param p90 90th percentile latency, ms
	 * @param p99 99th percentile latency, ms
	 * @param errors non-2xx/3xx responses plus socket errors
	 * @param cpuNanos the caller's CPU time over the round, ns; negative when not
	 * recorded
	 */
	record Round(double rps, long requests, double p50, double p90, double p99, long errors, long cpuNanos) {

		static Round read(Path wrk, @Nullable Path cpu) throws IOException {
			String text = Files.readString(wrk);
			Map<String, Double> percentiles = new LinkedHashMap<>();
			Matcher p = PERCENTILE.matcher(text);
			while (p.find()) {
				double value = Double.parseDouble(p.group(2));
				percentiles.put(p.group(1), switch (p.group(3)) {
					case "us" -> value / 1000;
					case "s" -> value * 1000;
					default -> value;
				});
			}
			if (percentiles.size() != 3) {
				throw new IllegalArgumentException(wrk + ": no latency distribution (run wrk with --latency)");
			}
			long errors = 0;
			Matcher non2xx = NON_2XX.matcher(text);
			if (non2xx.find()) {
				errors += Long.parseLong(non2xx.group(1));
			}
			Matcher socket = SOCKET_ERRORS.matcher(text);
			if (socket.find()) {
				for (int i = 1; i <= 4; i++) {
					errors += Long.parseLong(socket.group(i));
				}
			}
			long cpuNanos = -1;
			if (cpu != null) {
				String[] readings = Files.readString(cpu).trim().split("\\s+");
				if (readings.length == 2 && !readings[0].isEmpty()) {
					cpuNanos = Long.parseLong(readings[1]) - Long.parseLong(readings[0]);
				}
			}
			return new Round(Double.parseDouble(find(RPS, text, wrk)), Long.parseLong(find(REQUESTS, text, wrk)),
					percentiles.getOrDefault("50", 0.0), percentiles.getOrDefault("90", 0.0),
					percentiles.getOrDefault("99", 0.0), errors, cpuNanos);
		}

		private static String find(Pattern pattern, String text, Path file) {
			Matcher matcher = pattern.matcher(text);
			if (!matcher.find()) {
				throw new IllegalArgumentException(file + ": no match for " + pattern);
			}
			return matcher.group(1);
		}

		double cpuMicrosPerRequest() {
			return (this.cpuNanos < 0 || this.requests == 0) ? Double.NaN : this.cpuNanos / 1000.0 / this.requests;
		}

	}

}
