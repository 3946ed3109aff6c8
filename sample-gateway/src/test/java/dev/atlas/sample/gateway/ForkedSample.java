package dev.atlas.sample.gateway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A sample application run from its executable jar (extracted once, see
 * {@link #extracted}) in a JVM of its own, its output in a log file under
 * {@code target/}. Closing sends SIGTERM (its graceful shutdown runs) and waits up to 30
 * s, then kills it.
 */
final class ForkedSample implements AutoCloseable {

	/**
	 * The samples started from a class-data sharing archive ({@link #classArchive}): the
	 * user-service, which the tests here start about fifteen times. A training run costs
	 * about as much CPU as five starts save, so the order-service, started twice, has
	 * none.
	 */
	private static final Set<String> ARCHIVED = Set.of("sample.user-service.jar");

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
		Path extracted = extracted(Path.of(jar)).toAbsolutePath();
		List<String> command = new ArrayList<>();
		command.add(java());
		command.add("-XX:TieredStopAtLevel=1");
		Path archive = ARCHIVED.contains(jarProperty) ? classArchive(extracted) : null;
		if (archive != null) {
			command.add("-XX:SharedArchiveFile=" + archive);
		}
		command.add("-jar");
		command.add(extracted.toString());
		command.addAll(args);
		Path log = Path.of("target", name + ".log");
		Files.createDirectories(log.getParent());
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		return new ForkedSample(process, log);
	}

	private static String java() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

	/**
	 * The executable jar extracted once (Spring Boot's {@code jarmode=tools extract}): a
	 * jar of the application's classes next to its libraries, which starts in about 60 %
	 * of the time of the nested jar (this machine: 5 s against 9 s), and most tests here
	 * start several samples at once on two cores.
	 */
	private static synchronized Path extracted(Path jar) throws IOException {
		String name = jar.getFileName().toString();
		Path directory = Path.of("target", "extracted", name.replaceFirst("\\.jar$", ""));
		Path extracted = directory.resolve(name);
		// written after a complete extraction, with the jar's time: a partial one, or an
		// older jar's, is extracted again
		Path stamp = directory.resolveSibling(directory.getFileName() + ".extracted");
		String jarTime = Files.getLastModifiedTime(jar).toString();
		if (Files.isRegularFile(extracted) && Files.isRegularFile(stamp) && Files.readString(stamp).equals(jarTime)) {
			return extracted;
		}
		Files.deleteIfExists(stamp);
		// the class archive of an older jar is made again (classArchive)
		Files.deleteIfExists(extracted.resolveSibling("application.jsa.done"));
		Files.deleteIfExists(extracted.resolveSibling("application.jsa"));
		Path log = Path.of("target", "extract-" + name + ".log");
		Files.createDirectories(log.getParent());
		Process extract = new ProcessBuilder(java(), "-Djarmode=tools", "-jar", jar.toString(), "extract", "--force",
				"--destination", directory.toString())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		try {
			if (!extract.waitFor(60, TimeUnit.SECONDS) || extract.exitValue() != 0) {
				extract.destroyForcibly();
				throw new IOException("could not extract " + jar + ", see " + log);
			}
			Files.writeString(stamp, jarTime);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("interrupted while extracting " + jar, ex);
		}
		return extracted;
	}

	/**
	 * A class-data sharing archive of the application's classes (JDK's dynamic CDS, as
	 * Spring Boot's documentation describes): made once per extracted jar by a training
	 * run that stops after the context's refresh, without a registry. A JVM started with
	 * it loads most classes from the archive and starts in about 60 % of the CPU time
	 * (this machine: 4.7 s against 7.6 s), which counts when several samples start on two
	 * cores under load. {@code null} when the training run fails: the samples then start
	 * without it (a stale or unusable archive is ignored by the JVM too, with a warning).
	 */
	private static synchronized Path classArchive(Path extracted) throws IOException {
		Path archive = extracted.resolveSibling("application.jsa");
		Path stamp = extracted.resolveSibling("application.jsa.done");
		if (Files.isRegularFile(stamp)) {
			return Files.isRegularFile(archive) ? archive : null;
		}
		Path log = extracted.resolveSibling("training.log");
		Process training = new ProcessBuilder(java(), "-XX:TieredStopAtLevel=1", "-XX:ArchiveClassesAtExit=" + archive,
				"-Dspring.context.exit=onRefresh", "-jar", extracted.toString(), "--server.port=0",
				"--management.server.port=0", "--spring.cloud.zookeeper.enabled=false", "--spring.main.banner-mode=off")
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		try {
			boolean ended = training.waitFor(120, TimeUnit.SECONDS);
			if (!ended) {
				training.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
			if (!ended || training.exitValue() != 0) {
				Files.deleteIfExists(archive);
			}
			// tried once per extraction: a failed training is not repeated by every start
			Files.writeString(stamp, "");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("interrupted while training " + extracted, ex);
		}
		return Files.isRegularFile(archive) ? archive : null;
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
