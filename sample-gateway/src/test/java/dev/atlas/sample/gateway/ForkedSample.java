package dev.atlas.sample.gateway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A sample application run from its executable jar in a JVM of its own, its output in a
 * log file under {@code target/}. Closing sends SIGTERM (its graceful shutdown runs) and
 * waits up to 30 s, then kills it.
 */
final class ForkedSample implements AutoCloseable {

	private final Process process;

	private final Path log;

	private ForkedSample(Process process, Path log) {
		this.process = process;
		this.log = log;
	}

	/**
	 * Starts a sample.
	 * @param jarProperty the system property naming the executable jar (set by the build)
	 * @param name a name for its log file
	 * @param args its command-line arguments
	 * @return the running sample
	 * @throws IOException if it cannot start
	 * @throws IllegalStateException if the jar is not built
	 */
	static ForkedSample start(String jarProperty, String name, List<String> args) throws IOException {
		String jar = System.getProperty(jarProperty);
		if (jar == null || !Files.isRegularFile(Path.of(jar))) {
			throw new IllegalStateException(jarProperty + " names no built jar (" + jar
					+ "): build the samples first, e.g. ./mvnw -B -DskipTests package");
		}
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-jar");
		command.add(jar);
		command.addAll(args);
		Path log = Path.of("target", name + ".log");
		Files.createDirectories(log.getParent());
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		return new ForkedSample(process, log);
	}

	/**
	 * Where its output goes.
	 * @return the log file
	 */
	Path log() {
		return this.log;
	}

	/**
	 * Kills the sample at once (SIGKILL: no shutdown hook runs, so it does not
	 * deregister) and waits up to 10 s for it to end.
	 * @throws InterruptedException if interrupted while waiting
	 */
	void kill() throws InterruptedException {
		this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
	}

	@Override
	public void close() throws InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
	}

}
