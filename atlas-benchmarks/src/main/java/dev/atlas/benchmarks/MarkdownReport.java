package dev.atlas.benchmarks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * Turns the results of one JMH invocation of {@link PickBenchmark} into Markdown: time
 * and allocation per pick for every contender, size and thread count, ratios against
 * Spring's {@code RoundRobinLoadBalancer}, and the four "done when" targets, each
 * marked met or missed (by how much).
 */
public final class MarkdownReport {

	/** Most a full-chain pick may cost, as a multiple of Spring's round robin's. */
	static final double CHAIN_LIMIT = 1.2;

	/** Slowest ÷ fastest measurement iteration above which a cell is marked unstable. */
	static final double UNSTABLE_SPREAD = 1.5;

	private final Map<String, Cell> cells = new TreeMap<>();

	private final TreeSet<Integer> sizes = new TreeSet<>();

	private final TreeSet<Integer> threads = new TreeSet<>();

	private MarkdownReport() {
	}

	/**
	 * Reads JMH's results.
	 * @param results as returned by {@code Runner.run()}
	 * @return the report
	 * @throws IllegalArgumentException if a result is not in nanoseconds per operation
	 */
	public static MarkdownReport of(Collection<RunResult> results) {
		MarkdownReport report = new MarkdownReport();
		for (RunResult run : results) {
			String benchmark = run.getParams().getBenchmark();
			Contender contender = Contender.of(benchmark.substring(benchmark.lastIndexOf('.') + 1));
			String size = run.getParams().getParam("instances");
			if (contender == null || size == null) {
				continue;
			}
			Result<?> primary = run.getPrimaryResult();
			if (!"ns/op".equals(primary.getScoreUnit())) {
				throw new IllegalArgumentException(benchmark + " is in " + primary.getScoreUnit() + ", expected ns/op");
			}
			double bytes = Double.NaN;
			for (Map.Entry<String, Result> secondary : run.getSecondaryResults().entrySet()) {
				if (secondary.getKey().endsWith("gc.alloc.rate.norm")) {
					bytes = secondary.getValue().getScore();
				}
			}
			double fastest = Double.POSITIVE_INFINITY;
			double slowest = 0;
			for (BenchmarkResult result : run.getBenchmarkResults()) {
				for (IterationResult iteration : result.getIterationResults()) {
					double score = iteration.getPrimaryResult().getScore();
					fastest = Math.min(fastest, score);
					slowest = Math.max(slowest, score);
				}
			}
			double spread = (slowest > 0 && fastest > 0) ? slowest / fastest : 1;
			int n = Integer.parseInt(size);
			int t = run.getParams().getThreads();
			report.sizes.add(n);
			report.threads.add(t);
			report.cells.put(key(contender, n, t),
					new Cell(primary.getScore(), primary.getScoreError(), bytes, spread));
		}
		return report;
	}

	private static String key(Contender contender, int size, int threads) {
		return contender.name() + '/' + size + '/' + threads;
	}

	/**
	 * The measured cell.
	 * @return {@code null} when that combination was not run
	 */
	@Nullable Cell cell(Contender contender, int size, int threads) {
		return this.cells.get(key(contender, size, threads));
	}

	/**
	 * Number of measured cells.
	 * @return the count
	 */
	public int size() {
		return this.cells.size();
	}

	/**
	 * The whole report.
	 * @return the Markdown text, ending with a newline
	 */
	public String render() {
		StringBuilder out = new StringBuilder();
		for (int t : this.threads) {
			out.append("#### Time per pick, ")
				.append(threadsLabel(t))
				.append(" (ns/op per thread, lower is better; × = time ÷ Spring `RoundRobinLoadBalancer`'s at the same size, picked as its blocking client picks; subscribed rows: ÷ Spring's subscribed)\n\n");
			header(out);
			for (Contender contender : Contender.values()) {
				row(out, contender, t,
						(cell, base) -> String.format(Locale.ROOT, "%s ± %s (%s×)%s", number(cell.nanos),
								number(cell.error), (base != null) ? ratio(cell.nanos / base.nanos) : "?",
								(cell.unstable() || (base != null && base.unstable())) ? " ⚠" : ""));
			}
			out.append('\n');
			out.append(unstableNote(t));
		}
		for (int t : this.threads) {
			out.append("#### Allocation per pick, ").append(threadsLabel(t)).append(" (B/op, `-prof gc`)\n\n");
			header(out);
			for (Contender contender : Contender.values()) {
				row(out, contender, t, (cell, base) -> Double.isNaN(cell.bytes) ? "—" : number(cell.bytes));
			}
			out.append('\n');
		}
		targets(out);
		return out.toString();
	}

	private String unstableNote(int t) {
		List<String> unstable = new ArrayList<>();
		for (Contender contender : Contender.values()) {
			for (int n : this.sizes) {
				Cell cell = cell(contender, n, t);
				if (cell != null && cell.unstable()) {
					unstable
						.add(String.format(Locale.ROOT, "%s at %,d (%.1f×)", shortLabel(contender), n, cell.spread));
				}
			}
		}
		if (unstable.isEmpty()) {
			return "";
		}
		return String
			.format(Locale.ROOT, "⚠ = this cell or its baseline is unstable: its slowest measurement iteration "
					+ "(all forks) took more than %.1f× its fastest, because something else ran on the machine meanwhile, "
					+ "the JIT compiled the forks differently, or the code's own cost varies over time. Unstable: %s.%n%n",
					UNSTABLE_SPREAD, String.join("; ", unstable));
	}

	private void header(StringBuilder out) {
		out.append("| contender |");
		for (int n : this.sizes) {
			out.append(' ').append(String.format(Locale.ROOT, "%,d", n)).append(" |");
		}
		out.append("\n|---|");
		out.append("---:|".repeat(this.sizes.size()));
		out.append('\n');
	}

	private void row(StringBuilder out, Contender contender, int t, Format format) {
		boolean any = false;
		StringBuilder line = new StringBuilder("| ").append(contender.label).append(" |");
		for (int n : this.sizes) {
			Cell cell = cell(contender, n, t);
			any |= cell != null;
			line.append(' ')
				.append((cell != null) ? format.cell(cell, cell(contender.baseline(), n, t)) : "—")
				.append(" |");
		}
		if (any) {
			out.append(line).append('\n');
		}
	}

	private void targets(StringBuilder out) {
		out.append("#### Done-when targets\n\n");
		out.append("| target | case | measured | verdict |\n|---|---|---:|---|\n");
		for (int t : this.threads) {
			for (Contender chain : List.of(Contender.ATLAS_CHAIN, Contender.ATLAS_CHAIN_TAGGED,
					Contender.ATLAS_CHAIN_SUBSCRIBED, Contender.ATLAS_CHAIN_BLOCKED)) {
				Cell atlas = cell(chain, 100, t);
				Cell spring = cell(chain.baseline(), 100, t);
				if (atlas != null && spring != null) {
					double ratio = atlas.nanos / spring.nanos;
					target(out, "1. full chain ≤ " + ratio(CHAIN_LIMIT) + "× Spring round robin at 100 instances",
							shortLabel(chain) + ", " + threadsLabel(t), ratio(ratio) + "×" + flag(atlas, spring),
							(ratio <= CHAIN_LIMIT) ? "met" : missed(ratio / CHAIN_LIMIT - 1, "slower than allowed"));
				}
			}
		}
		for (int t : this.threads) {
			for (Contender strategy : List.of(Contender.ATLAS_LR, Contender.ATLAS_PEWMA, Contender.ATLAS_RING,
					Contender.ATLAS_RING_BOUNDED)) {
				Cell atlas = cell(strategy, 100, t);
				Cell spring = cell(Contender.SPRING_RR, 100, t);
				if (atlas != null && spring != null) {
					double ratio = atlas.nanos / spring.nanos;
					target(out, "1b. each load-aware strategy ≤ 2× Spring round robin at 100 instances (#15)",
							shortLabel(strategy) + ", " + threadsLabel(t), ratio(ratio) + "×" + flag(atlas, spring),
							(ratio <= 2.0) ? "met" : missed(ratio / 2.0 - 1, "slower than allowed"));
				}
			}
		}
		for (int t : this.threads) {
			Cell atlas = cell(Contender.ATLAS_WRR, 100, t);
			Cell spring = cell(Contender.SPRING_RR, 100, t);
			if (atlas != null && spring != null) {
				double ratio = atlas.nanos / spring.nanos;
				target(out, "1c. weighted-round-robin ≤ 1.2× Spring round robin at 100 instances (#32)",
						threadsLabel(t), ratio(ratio) + "×" + flag(atlas, spring),
						(ratio <= 1.2) ? "met" : missed(ratio / 1.2 - 1, "slower than allowed"));
			}
		}
		for (int t : this.threads) {
			for (Contender atlas : List.of(Contender.ATLAS_WR, Contender.ENGINE_WR)) {
				Cell a = cell(atlas, 1000, t);
				Cell nacos = cell(Contender.NACOS, 1000, t);
				if (a != null && nacos != null) {
					double speedup = nacos.nanos / a.nanos;
					target(out, "2. Atlas weighted random ≥ 5× faster than `NacosLoadBalancer` at 1,000",
							shortLabel(atlas) + ", " + threadsLabel(t), ratio(speedup) + "× faster" + flag(a, nacos),
							(speedup >= 5.0) ? "met" : missed(1 - speedup / 5.0, "short of 5×"));
				}
			}
		}
		for (int t : this.threads) {
			for (Contender atlas : Contender.values()) {
				Cell small = cell(atlas, 10, t);
				Cell large = cell(atlas, 10_000, t);
				if (atlas.atlas && small != null && large != null) {
					double ratio = large.nanos / small.nanos;
					target(out, "3. Atlas cost at 10,000 instances ≤ 2× its cost at 10",
							shortLabel(atlas) + ", " + threadsLabel(t), ratio(ratio) + "×" + flag(small, large),
							(ratio <= 2.0) ? "met" : missed(ratio / 2.0 - 1, "over 2×"));
				}
			}
		}
		for (int t : this.threads) {
			for (Contender atlas : Contender.values()) {
				if (!atlas.atlas) {
					continue;
				}
				double worst = Double.NEGATIVE_INFINITY;
				int worstSize = -1;
				double worstSpring = Double.NaN;
				for (int n : this.sizes) {
					Cell a = cell(atlas, n, t);
					Cell spring = cell(atlas.baseline(), n, t);
					if (a != null && spring != null && !Double.isNaN(a.bytes) && !Double.isNaN(spring.bytes)) {
						double excess = Math.round(a.bytes) - Math.round(spring.bytes);
						if (excess > worst) {
							worst = excess;
							worstSize = n;
							worstSpring = Math.round(spring.bytes);
						}
					}
				}
				if (worstSize > 0) {
					String measured = String.format(Locale.ROOT, "%+.0f B vs %.0f B (worst size: %,d)", worst,
							worstSpring, worstSize);
					target(out, "4. allocation per pick ≤ Spring round robin's (whole bytes, every size)",
							shortLabel(atlas) + ", " + threadsLabel(t), measured,
							(worst <= 0) ? "met" : String.format(Locale.ROOT, "**missed** by %.0f B/pick", worst));
				}
			}
		}
		out.append('\n');
	}

	private static String flag(Cell first, Cell second) {
		return (first.unstable() || second.unstable()) ? " ⚠" : "";
	}

	private static void target(StringBuilder out, String target, String which, String measured, String verdict) {
		out.append("| ")
			.append(target)
			.append(" | ")
			.append(which)
			.append(" | ")
			.append(measured)
			.append(" | ")
			.append(verdict)
			.append(" |\n");
	}

	private static String missed(double fraction, String what) {
		return String.format(Locale.ROOT, "**missed** by %.0f %% (%s)", fraction * 100, what);
	}

	private static String shortLabel(Contender contender) {
		return switch (contender) {
			case ATLAS_WR -> "weighted-random";
			case ATLAS_SWRR -> "smooth-round-robin";
			case ATLAS_CHAIN -> "chain, no tag";
			case ATLAS_CHAIN_TAGGED -> "chain, tag v2";
			case ATLAS_CHAIN_EJECTED -> "chain, one ejected";
			case ATLAS_CHAIN_LANE_RULE -> "chain, lane rule";
			case ATLAS_CHAIN_SUBSCRIBED -> "chain, no tag, subscribed";
			case ATLAS_CHAIN_BLOCKED -> "chain, no tag, block()";
			case ATLAS_LR -> "least-request";
			case ATLAS_PEWMA -> "peak-ewma";
			case ATLAS_WRR -> "weighted-round-robin";
			case ATLAS_RING -> "ring-hash";
			case ATLAS_RING_BOUNDED -> "ring-hash, bounded load";
			case ENGINE_WR -> "engine weighted-random";
			case ENGINE_SWRR -> "engine smooth-round-robin";
			case SPRING_RR -> "Spring round robin";
			case SPRING_RR_SUBSCRIBED -> "Spring round robin, subscribed";
			case SPRING_RANDOM -> "Spring random";
			case SPRING_WEIGHTED -> "Spring weighted + RR";
			case NACOS -> "Nacos";
		};
	}

	private static String threadsLabel(int threads) {
		return (threads == 1) ? "1 thread" : threads + " threads";
	}

	/** Three significant digits, thousands separated; "—" for NaN. */
	static String number(double value) {
		if (Double.isNaN(value) || Double.isInfinite(value)) {
			return "—";
		}
		double abs = Math.abs(value);
		if (abs >= 100) {
			return String.format(Locale.ROOT, "%,.0f", value);
		}
		if (abs >= 10) {
			return String.format(Locale.ROOT, "%.1f", value);
		}
		return String.format(Locale.ROOT, "%.2f", value);
	}

	static String ratio(double value) {
		if (Double.isNaN(value) || Double.isInfinite(value)) {
			return "?";
		}
		return (value >= 100) ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.2f", value);
	}

	/**
	 * The labels of the contenders that produced no result, for the smoke test.
	 * @return the labels, possibly empty
	 */
	List<String> missing() {
		List<String> missing = new ArrayList<>();
		for (Contender contender : Contender.values()) {
			for (int n : this.sizes) {
				for (int t : this.threads) {
					if (cell(contender, n, t) == null) {
						missing.add(key(contender, n, t));
					}
				}
			}
		}
		return missing;
	}

	/** The contenders, in table order: JMH method name and label. */
	enum Contender {

		SPRING_RR("springRoundRobin", "Spring `RoundRobinLoadBalancer` (baseline)", false),
		SPRING_RR_SUBSCRIBED("springRoundRobinSubscribed",
				"Spring `RoundRobinLoadBalancer`, subscribed (baseline of the subscribed rows)", false),
		SPRING_RANDOM("springRandom", "Spring `RandomLoadBalancer`", false),
		SPRING_WEIGHTED("springWeightedRoundRobin", "Spring `WeightedServiceInstanceListSupplier` + round robin",
				false),
		NACOS("nacos", "SCA `NacosLoadBalancer` (cluster `a`)", false),
		ATLAS_WR("atlasWeightedRandom", "Atlas weighted-random", true),
		ATLAS_SWRR("atlasSmoothRoundRobin", "Atlas smooth-round-robin", true),
		ATLAS_CHAIN("atlasChain", "Atlas full chain, no tag (10 % canary)", true),
		ATLAS_CHAIN_TAGGED("atlasChainTagged", "Atlas full chain, `X-Service-Version: v2`", true),
		ATLAS_CHAIN_EJECTED("atlasChainEjected", "Atlas full chain, one instance ejected as an outlier", true),
		ATLAS_CHAIN_LANE_RULE("atlasChainLaneRule",
				"Atlas full chain, lane rules (cookie, header), `X-User-Group: beta` → v2", true),
		ATLAS_CHAIN_SUBSCRIBED("atlasChainSubscribed", "Atlas full chain, no tag, subscribed", true),
		ATLAS_CHAIN_BLOCKED("atlasChainBlocked", "Atlas full chain, no tag, `choose(request).block()`", true),
		ATLAS_LR("atlasLeastRequest", "Atlas least-request (requests in flight)", true),
		ATLAS_PEWMA("atlasPeakEwma", "Atlas peak-ewma (latencies known)", true),
		ATLAS_WRR("atlasWeightedRoundRobin", "Atlas weighted-round-robin (reported weights 1:2:3 in force)", true),
		ATLAS_RING("atlasRingHash", "Atlas ring-hash (64 user ids)", true),
		ATLAS_RING_BOUNDED("atlasRingHashBounded", "Atlas ring-hash with bounded load", true),
		ENGINE_WR("engineWeightedRandom", "Atlas engine only: `Balancer.choose`, weighted-random", true),
		ENGINE_SWRR("engineSmoothRoundRobin", "Atlas engine only: `Balancer.choose`, smooth-round-robin", true);

		final String method;

		final String label;

		final boolean atlas;

		Contender(String method, String label, boolean atlas) {
			this.method = method;
			this.label = label;
			this.atlas = atlas;
		}

		static @Nullable Contender of(String method) {
			for (Contender contender : values()) {
				if (contender.method.equals(method)) {
					return contender;
				}
			}
			return null;
		}

		boolean reactor() {
			return this != ENGINE_WR && this != ENGINE_SWRR;
		}

		/**
		 * What this contender's ratios are taken against: Spring's round robin picked the
		 * same way (subscribed, or as a blocking client picks).
		 */
		Contender baseline() {
			return (this == ATLAS_CHAIN_SUBSCRIBED || this == SPRING_RR_SUBSCRIBED) ? SPRING_RR_SUBSCRIBED : SPRING_RR;
		}

	}

	/**
	 * One measured cell.
	 *
	 * @param nanos average time per pick and thread, ns
	 * @param error 99.9 % half-width, ns ({@code NaN} with a single iteration)
	 * @param bytes allocation per pick, B ({@code NaN} without {@code -prof gc})
	 * @param spread slowest measurement iteration ÷ fastest ({@code 1} with a single
	 * iteration)
	 */
	record Cell(double nanos, double error, double bytes, double spread) {

		/** Iterations (of all forks) differ by more than half. */
		boolean unstable() {
			return this.spread > UNSTABLE_SPREAD;
		}

	}

	private interface Format {

		String cell(Cell cell, @Nullable Cell baseline);

	}

}
