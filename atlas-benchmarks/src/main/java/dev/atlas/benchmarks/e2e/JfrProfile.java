package dev.atlas.benchmarks.e2e;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;
import org.jspecify.annotations.Nullable;

/**
 * Where a caller's CPU time goes, Atlas's side against plain Spring Cloud's, from the JFR
 * recordings {@code atlas-benchmarks/e2e.sh} makes with {@code JFR=1}: each execution
 * sample is charged to the code that was running, named by the first frame (from the top
 * of the stack) that is not the JDK's, so a {@code HashMap.get} called by Atlas counts as
 * Atlas's. Each component's share of the samples, times the side's CPU time per request
 * over the same rounds, estimates its µs per request; the last column is the difference.
 * Samples are taken every 20 ms per running thread (JFR's default settings), so a
 * component below about 0.5 % of a few thousand samples is within the noise.
 */
public final class JfrProfile {

	/** Components in the order they are tried: the first matching prefix wins. */
	private static final Map<String, String> COMPONENTS = new LinkedHashMap<>();

	static {
		COMPONENTS.put("dev.atlas.sample.", "the sample application");
		COMPONENTS.put("dev.atlas.loadbalancer.", "Atlas: engine (choice, routing, statistics)");
		COMPONENTS.put("dev.atlas.autoconfigure.", "Atlas: adapters (filters, clients, lifecycle)");
		COMPONENTS.put("org.springframework.cloud.loadbalancer.stats.", "Spring Cloud LoadBalancer: Micrometer stats");
		COMPONENTS.put("org.springframework.cloud.loadbalancer.", "Spring Cloud LoadBalancer");
		COMPONENTS.put("org.springframework.cloud.client.", "Spring Cloud Commons (load-balanced clients)");
		COMPONENTS.put("org.springframework.cloud.context.", "Spring Cloud Context (named contexts)");
		COMPONENTS.put("org.springframework.cloud.openfeign.", "Spring Cloud OpenFeign");
		COMPONENTS.put("feign.", "Feign");
		COMPONENTS.put("org.springframework.cloud.gateway.", "Spring Cloud Gateway");
		COMPONENTS.put("org.springframework.retry.", "spring-retry");
		COMPONENTS.put("org.springframework.beans.", "Spring beans (look-ups)");
		COMPONENTS.put("io.micrometer.context.", "context-propagation");
		COMPONENTS.put("io.micrometer.", "Micrometer (observations, meters)");
		COMPONENTS.put("reactor.netty.", "Reactor Netty");
		COMPONENTS.put("io.netty.", "Netty");
		COMPONENTS.put("reactor.", "Reactor");
		COMPONENTS.put("org.springframework.web.", "Spring Web (MVC, WebFlux, clients)");
		COMPONENTS.put("org.springframework.http.", "Spring Web (MVC, WebFlux, clients)");
		COMPONENTS.put("org.apache.catalina.", "Tomcat");
		COMPONENTS.put("org.apache.coyote.", "Tomcat");
		COMPONENTS.put("org.apache.tomcat.", "Tomcat");
		COMPONENTS.put("com.fasterxml.jackson.", "Jackson");
		COMPONENTS.put("tools.jackson.", "Jackson");
	}

	private static final String OTHER = "other";

	private static final String JDK_ONLY = "the JDK only (no application frame)";

	private JfrProfile() {
	}

	/**
	 * Prints the profile of a target.
	 * @param args the rounds directory, the target, Atlas's recording, plain Spring
	 * Cloud's recording
	 * @throws IOException when a file cannot be read
	 */
	public static void main(String[] args) throws IOException {
		if (args.length != 4) {
			System.err.println("usage: JfrProfile <rounds directory> <target> <Atlas.jfr> <plain.jfr>");
			System.exit(2);
		}
		Path rounds = Path.of(args[0]);
		String target = args[1];
		System.out.print(markdown(target, samples(Path.of(args[2])), samples(Path.of(args[3])),
				cpuMicrosPerRequest(rounds, target, "A"), cpuMicrosPerRequest(rounds, target, "B")));
	}

	/**
	 * The table.
	 * @param target the target profiled
	 * @param atlas samples per component, Atlas's side
	 * @param plain samples per component, plain Spring Cloud's side
	 * @param atlasCpu the CPU time per request of Atlas's side over the recording, µs
	 * @param plainCpu the same of plain Spring Cloud's side, µs
	 * @return the table, in Markdown
	 */
	static String markdown(String target, Map<String, Integer> atlas, Map<String, Integer> plain, double atlasCpu,
			double plainCpu) {
		double atlasTotal = atlas.values().stream().mapToInt(Integer::intValue).sum();
		double plainTotal = plain.values().stream().mapToInt(Integer::intValue).sum();
		Map<String, double[]> rows = new LinkedHashMap<>();
		for (String component : Stream.concat(atlas.keySet().stream(), plain.keySet().stream()).distinct().toList()) {
			double a = atlas.getOrDefault(component, 0) / atlasTotal;
			double b = plain.getOrDefault(component, 0) / plainTotal;
			rows.put(component, new double[] { a, b, a * atlasCpu, b * plainCpu });
		}
		StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
				"%s: %,.0f samples (Atlas), %,.0f (plain); CPU per request %.1f µs (Atlas), %.1f µs (plain)%n%n",
				target, atlasTotal, plainTotal, atlasCpu, plainCpu));
		out.append("| component (first non-JDK frame) | share Atlas / plain | µs per request Atlas / plain | ")
			.append("difference µs |\n|---|---|---|---|\n");
		rows.entrySet()
			.stream()
			.sorted((x, y) -> Double.compare(Math.abs(y.getValue()[2] - y.getValue()[3]),
					Math.abs(x.getValue()[2] - x.getValue()[3])))
			.forEach((row) -> {
				double[] v = row.getValue();
				out.append(String.format(Locale.ROOT, "| %s | %.1f %% / %.1f %% | %.1f / %.1f | %+.1f |%n",
						row.getKey(), v[0] * 100, v[1] * 100, v[2], v[3], v[2] - v[3]));
			});
		return out.toString();
	}

	/**
	 * Execution samples of a recording by component.
	 * @param recording a JFR file
	 * @return sample counts by component, in no particular order
	 * @throws IOException when the file cannot be read
	 */
	static Map<String, Integer> samples(Path recording) throws IOException {
		Map<String, Integer> counts = new LinkedHashMap<>();
		for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
			if ("jdk.ExecutionSample".equals(event.getEventType().getName())) {
				counts.merge(component(event.getStackTrace()), 1, Integer::sum);
			}
		}
		return counts;
	}

	static String component(@Nullable RecordedStackTrace stack) {
		if (stack == null) {
			return JDK_ONLY;
		}
		for (RecordedFrame frame : stack.getFrames()) {
			if (!frame.isJavaFrame() || frame.getMethod() == null) {
				continue;
			}
			String type = frame.getMethod().getType().getName();
			if (type.startsWith("java.") || type.startsWith("jdk.") || type.startsWith("sun.")
					|| type.startsWith("javax.")) {
				continue;
			}
			return component(type);
		}
		return JDK_ONLY;
	}

	static String component(String type) {
		for (Map.Entry<String, String> prefix : COMPONENTS.entrySet()) {
			if (type.startsWith(prefix.getKey())) {
				return prefix.getValue();
			}
		}
		return OTHER;
	}

	/** CPU time per request of a side over all the rounds of a target, µs. */
	private static double cpuMicrosPerRequest(Path rounds, String target, String side) throws IOException {
		long nanos = 0;
		long requests = 0;
		for (Map<String, EndToEndReport.Round> round : EndToEndReport.rounds(rounds)
			.getOrDefault(target, Map.of())
			.values()) {
			EndToEndReport.Round measured = round.get(side);
			if (measured != null && measured.cpuNanos() >= 0) {
				nanos += measured.cpuNanos();
				requests += measured.requests();
			}
		}
		return (requests > 0) ? nanos / 1000.0 / requests : Double.NaN;
	}

}
