package dev.atlas.sample.registry;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * An in-process Apache ZooKeeper for the samples, the demo and the integration tests: a
 * real registry without Docker or a download. Not meant for production.
 *
 * <p>
 * Run it with {@code java -jar sample-registry-<version>-exec.jar [--port=2181]}; it
 * prints {@code ZooKeeper ready on 127.0.0.1:<port>} once it accepts connections and runs
 * until it is stopped. From a test, use {@link #start(int)} in a try-with-resources
 * block.
 */
public final class EmbeddedRegistry implements AutoCloseable {

	/** The port used when none is given. */
	public static final int DEFAULT_PORT = 2181;

	private static final String HOST = "127.0.0.1";

	private final TestingServer server;

	private final Path home;

	private EmbeddedRegistry(TestingServer server, Path home) {
		this.server = server;
		this.home = home;
	}

	/**
	 * Starts a standalone ZooKeeper on {@code 127.0.0.1} with a fresh temporary data
	 * directory that is deleted again by {@link #close()}.
	 * @param port the client port, or {@code 0} for a free one
	 * @return the running registry
	 * @throws Exception if the server does not start
	 */
	public static EmbeddedRegistry start(int port) throws Exception {
		quietDefaults();
		// ZooKeeper writes its generated configuration next to the data directory, so
		// both
		// live in one private temporary folder that close() removes as a whole.
		Path home = Files.createTempDirectory("atlas-registry-");
		File data = home.resolve("data").toFile();
		// -1 = let Curator pick (election/quorum ports, server id, tick time, max
		// connections)
		InstanceSpec spec = new InstanceSpec(data, (port > 0) ? port : -1, -1, -1, true, -1, -1, -1, null, HOST);
		try {
			return new EmbeddedRegistry(new TestingServer(spec, true), home);
		}
		catch (Exception ex) {
			deleteRecursively(home);
			throw ex;
		}
	}

	/**
	 * @return the client port
	 */
	public int port() {
		return this.server.getPort();
	}

	/**
	 * @return the connect string, {@code 127.0.0.1:<port>}
	 */
	public String connectString() {
		return HOST + ":" + this.server.getPort();
	}

	/** Stops the server and deletes its temporary data directory. */
	@Override
	public void close() throws IOException {
		try {
			this.server.close();
		}
		finally {
			deleteRecursively(this.home);
		}
	}

	private static void deleteRecursively(Path root) throws IOException {
		if (!Files.exists(root)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> {
				try {
					Files.deleteIfExists(path);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			});
		}
		catch (UncheckedIOException ex) {
			throw ex.getCause();
		}
	}

	/**
	 * Starts the registry and blocks until the JVM is stopped.
	 * @param args optional port, as {@code 2181} or {@code --port=2181}
	 * @throws Exception if the server does not start
	 */
	public static void main(String[] args) throws Exception {
		if (System.getProperty("logback.configurationFile") == null) {
			System.setProperty("logback.configurationFile", "atlas-registry-logback.xml");
		}
		int port;
		try {
			port = parsePort(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println(ex.getMessage());
			System.exit(2);
			return;
		}
		if (port > 0 && !isFree(port)) {
			// ZooKeeper would otherwise halt the JVM from its own thread
			System.err.println("Cannot start ZooKeeper: port " + port + " on " + HOST + " is already in use");
			System.exit(1);
		}
		EmbeddedRegistry registry = start(port);
		CountDownLatch stopped = new CountDownLatch(1);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			try {
				registry.close();
			}
			catch (IOException ex) {
				System.err.println("Could not stop ZooKeeper cleanly: " + ex.getMessage());
			}
			finally {
				stopped.countDown();
			}
		}, "registry-shutdown"));
		System.out.println("ZooKeeper ready on " + registry.connectString());
		System.out.flush();
		stopped.await();
	}

	static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.setReuseAddress(true);
			socket.bind(new InetSocketAddress(HOST, port));
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	static int parsePort(String[] args) {
		for (String arg : args) {
			String value = arg.startsWith("--port=") ? arg.substring("--port=".length()) : arg;
			try {
				int port = Integer.parseInt(value.trim());
				if (port < 0 || port > 65535) {
					throw new IllegalArgumentException("Port out of range: " + port);
				}
				return port;
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException("Usage: EmbeddedRegistry [--port=<port>] (got '" + arg + "')", ex);
			}
		}
		return DEFAULT_PORT;
	}

	private static void quietDefaults() {
		setIfAbsent("zookeeper.admin.enableServer", "false");
		setIfAbsent("zookeeper.jmx.log4j.disable", "true");
		// allow the four-letter health words ("ruok") for scripts
		setIfAbsent("zookeeper.4lw.commands.whitelist", "ruok,srvr,stat");
	}

	private static void setIfAbsent(String key, String value) {
		if (System.getProperty(key) == null) {
			System.setProperty(key, value);
		}
	}

}
