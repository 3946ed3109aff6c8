package dev.atlas.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;

/**
 * Runs the pick benchmarks in one JMH invocation and prints the Markdown report
 * ({@link MarkdownReport}).
 *
 * <pre>
 * java -cp … dev.atlas.benchmarks.BenchmarkMain [--markdown FILE] [JMH options, e.g. -f 1 -wi 3 -i 3 -prof gc]
 * </pre>
 *
 * Without a benchmark pattern, every benchmark of the module runs.
 */
public final class BenchmarkMain {

	private BenchmarkMain() {
	}

	/**
	 * Entry point.
	 * @param args {@code --markdown FILE} (optional, first), then JMH's command-line
	 * options
	 * @throws Exception if JMH fails
	 */
	public static void main(String[] args) throws Exception {
		List<String> jmhArgs = new ArrayList<>(Arrays.asList(args));
		Path markdown = null;
		if (jmhArgs.size() >= 2 && jmhArgs.get(0).equals("--markdown")) {
			markdown = Path.of(jmhArgs.get(1));
			jmhArgs = jmhArgs.subList(2, jmhArgs.size());
		}
		String report = run(new CommandLineOptions(jmhArgs.toArray(new String[0])));
		System.out.println();
		System.out.println(report);
		if (markdown != null) {
			Files.writeString(markdown, report);
		}
	}

	/**
	 * Runs JMH and renders the report.
	 * @param options the JMH options
	 * @return the Markdown text
	 * @throws Exception if JMH fails
	 */
	public static String run(Options options) throws Exception {
		Collection<RunResult> results = new Runner(options).run();
		return MarkdownReport.of(results).render();
	}

}
