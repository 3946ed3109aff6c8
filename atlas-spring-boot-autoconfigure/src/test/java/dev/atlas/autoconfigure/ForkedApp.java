package dev.atlas.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.SpringApplication;

import static org.awaitility.Awaitility.await;

/**
 * The tests' {@link WhoApp} in a JVM of its own (the test classpath), registered in the
 * tests' ZooKeeper, so that a test can do to it what only a process can suffer: SIGKILL
 * ({@link #kill()}), SIGSTOP and SIGCONT ({@link #freeze()}, {@link #thaw()}). The forked
 * JVM writes its output to a log file and exits when the test JVM does (it watches the
 * standard input the test holds). Linux and macOS only (signals through {@code kill}).
 * Not thread-safe.
 */
public final class ForkedApp implements AutoCloseable {

	private final Process process;

	private final Path log;

	private final int port;

	private final long startedNanos = System.nanoTime();

	private volatile long listeningAfterNanos = -1;

	private volatile boolean frozen;

	private ForkedApp(Process process, Path log, int port) {
		this.process = process;
		this.log = log;
		this.port = port;
	}

	/**
	 * Starts {@link WhoApp} registered in a ZooKeeper on a free port: host
	 * {@code 127.0.0.1}, Nacos off, no banner, no drain, no warmup, then
	 * {@code properties}. Returns at once; see {@link #awaitListening(Duration)}.
	 * @param zookeeper ZooKeeper's connect string
	 * @param log the file the JVM's output goes to
	 * @param name {@code spring.application.name}, the service id it registers as
	 * @param properties more {@code key=value} properties; later ones win
	 * @return the started process
	 * @throws IOException if the JVM cannot start or no port is free
	 */
	public static ForkedApp start(String zookeeper, Path log, String name, String... properties) throws IOException {
		int port = Ports.free();
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		// start fast on a small machine: C1 only, one GC thread, a small heap
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-XX:+UseSerialGC");
		command.add("-Xmx256m");
		command.add(Main.class.getName());
		command.add("--spring.application.name=" + name);
		command.add("--server.port=" + port);
		command.add("--spring.cloud.zookeeper.connect-string=" + zookeeper);
		command.add("--spring.cloud.zookeeper.discovery.instance-host=127.0.0.1");
		command.add("--spring.cloud.nacos.discovery.enabled=false");
		command.add("--spring.main.banner-mode=off");
		command.add("--atlas.lifecycle.drain=0s");
		command.add("--atlas.warmup.enabled=false");
		for (String property : properties) {
			command.add("--" + property);
		}
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		return new ForkedApp(process, log, port);
	}

	/**
	 * Waits until the application accepts connections on its port.
	 * @param atMost how long to wait
	 * @throws IllegalStateException if the JVM ended meanwhile (with the end of its log)
	 */
	public void awaitListening(Duration atMost) {
		await("forked application on port " + this.port + " listening").atMost(atMost)
			.pollInterval(Duration.ofMillis(200))
			.until(() -> !this.process.isAlive() || Ports.listening(this.port));
		if (!this.process.isAlive()) {
			throw new IllegalStateException("forked application ended; its log:\n" + tail(40));
		}
		if (this.listeningAfterNanos < 0) {
			this.listeningAfterNanos = System.nanoTime() - this.startedNanos;
		}
	}

	/**
	 * The port it listens on.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * The process id.
	 * @return the pid
	 */
	public long pid() {
		return this.process.pid();
	}

	/**
	 * Kills the JVM with SIGKILL ({@link Process#destroyForcibly()}, which sends SIGKILL
	 * on Linux): no shutdown hook runs, nothing deregisters, the kernel closes its
	 * sockets, and the registry lists it until its session expires.
	 * @return the exit value, {@code 137} (128 + 9) for a process ended by SIGKILL
	 * @throws InterruptedException if interrupted while waiting for the end
	 */
	public int kill() throws InterruptedException {
		this.process.destroyForcibly();
		if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
			throw new IllegalStateException("pid " + pid() + " still alive 10 s after SIGKILL");
		}
		return this.process.exitValue();
	}

	/**
	 * Stops the JVM with SIGSTOP: the kernel still accepts connections on its port (into
	 * the listen backlog) and takes requests into socket buffers, but nothing answers.
	 * @throws IOException if {@code kill} cannot run
	 * @throws InterruptedException if interrupted while waiting for {@code kill}
	 */
	public void freeze() throws IOException, InterruptedException {
		signal("STOP");
		this.frozen = true;
	}

	/**
	 * Resumes a JVM stopped by {@link #freeze()} (SIGCONT).
	 * @throws IOException if {@code kill} cannot run
	 * @throws InterruptedException if interrupted while waiting for {@code kill}
	 */
	public void thaw() throws IOException, InterruptedException {
		signal("CONT");
		this.frozen = false;
	}

	private void signal(String signal) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).inheritIO().start();
		if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
			throw new IllegalStateException("kill -" + signal + " " + pid() + " failed");
		}
	}

	/**
	 * Pid, port, how long it took to listen, and the CPU time the JVM has used.
	 * @return a description for test output
	 */
	@Override
	public String toString() {
		return "pid " + pid() + " port " + this.port
				+ ((this.listeningAfterNanos < 0) ? ""
						: " listening after " + TimeUnit.NANOSECONDS.toMillis(this.listeningAfterNanos) + " ms")
				+ this.process.info().totalCpuDuration().map((cpu) -> ", " + cpu.toMillis() + " ms CPU").orElse("");
	}

	/**
	 * The last lines of its log.
	 * @param lines how many
	 * @return the lines, joined by line separators; a note if the log cannot be read
	 */
	public String tail(int lines) {
		try {
			List<String> all = Files.readAllLines(this.log, StandardCharsets.UTF_8);
			return String.join(System.lineSeparator(), all.subList(Math.max(0, all.size() - lines), all.size()));
		}
		catch (IOException ex) {
			return "(log " + this.log + " unreadable: " + ex + ")";
		}
	}

	/**
	 * Resumes it if frozen, then kills it (SIGKILL) and waits up to 10 s for the end.
	 * Idempotent.
	 */
	@Override
	public void close() throws Exception {
		if (this.frozen && this.process.isAlive()) {
			thaw();
		}
		if (this.process.isAlive()) {
			this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
	}

	/** The forked application's main class: {@link WhoApp}. */
	public static final class Main {

		private Main() {
		}

		/**
		 * Runs {@link WhoApp}, and exits when the standard input ends (the test JVM,
		 * which holds it, ended).
		 * @param args Spring Boot arguments
		 */
		public static void main(String[] args) {
			Thread orphanGuard = new Thread(() -> {
				try {
					while (System.in.read() != -1) {
						// nothing to read; wait for the end
					}
				}
				catch (IOException ex) {
					// the pipe broke: same as its end
				}
				System.exit(1);
			}, "orphan-guard");
			orphanGuard.setDaemon(true);
			orphanGuard.start();
			SpringApplication.run(WhoApp.class, args);
		}

	}

}
