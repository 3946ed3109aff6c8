package dev.atlas.autoconfigure.nacos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP forwarder that stands between applications and a registry, so that a
 * test can take "the registry" away from them without stopping the real server (which
 * other tests share): {@link #down()} closes the listening ports (new connections are
 * refused) and cuts every forwarded connection, both towards the applications and towards
 * the server; {@link #up()} listens on the same ports again.
 *
 * <p>
 * A Nacos client needs two ports (HTTP at the port of its server address and gRPC at that
 * port + 1000): {@link #nacos(String, boolean)} forwards both.
 *
 * <p>
 * Thread-safe. {@link #close()} takes it down for good and stops its threads.
 */
final class TcpForwarder implements AutoCloseable {

	/** Nacos's default gRPC port offset ({@code nacos.server.grpc.port.offset}). */
	static final int NACOS_GRPC_OFFSET = 1000;

	private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

	private static final AtomicInteger threadIds = new AtomicInteger();

	private final List<Route> routes;

	private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "tcp-forwarder-" + threadIds.incrementAndGet());
		thread.setDaemon(true);
		return thread;
	});

	/** Forwarded sockets, both sides; closed on {@link #down()}. */
	private final Set<Socket> open = ConcurrentHashMap.newKeySet();

	/**
	 * Guards {@link #listening}, {@link #up}, {@link #generation} and {@link #closed}.
	 */
	private final Object lock = new Object();

	private final List<ServerSocket> listening = new ArrayList<>();

	private boolean up;

	/** Counts {@link #down()}s: a connection accepted before one is cut, even if late. */
	private int generation;

	private boolean closed;

	private TcpForwarder(List<Route> routes) {
		this.routes = List.copyOf(routes);
	}

	/**
	 * A forwarder for a Nacos server: a free loopback port P to the server's port, and P
	 * + 1000 to the server's gRPC port (its port + 1000).
	 * @param serverAddress {@code host:port} of the Nacos server
	 * @param up whether it accepts connections from the start ({@code false}: the ports
	 * are chosen free, but refuse connections until {@link #up()})
	 * @return the forwarder; {@link #address()} is the server address to give the
	 * applications
	 * @throws IOException if no pair of free ports was found
	 */
	static TcpForwarder nacos(String serverAddress, boolean up) throws IOException {
		int colon = serverAddress.lastIndexOf(':');
		String host = serverAddress.substring(0, colon);
		int port = Integer.parseInt(serverAddress.substring(colon + 1));
		IOException last = null;
		for (int attempt = 0; attempt < 20; attempt++) {
			int listen;
			try (ServerSocket probe = new ServerSocket(0, 50, LOOPBACK)) {
				listen = probe.getLocalPort();
			}
			if (listen + NACOS_GRPC_OFFSET > 65_535) {
				continue;
			}
			TcpForwarder forwarder = new TcpForwarder(List.of(new Route(listen, host, port),
					new Route(listen + NACOS_GRPC_OFFSET, host, port + NACOS_GRPC_OFFSET)));
			try {
				forwarder.up();
				if (!up) {
					forwarder.down();
				}
				return forwarder;
			}
			catch (IOException ex) {
				forwarder.close();
				last = ex;
			}
		}
		throw new IOException("No free pair of loopback ports P, P + " + NACOS_GRPC_OFFSET, last);
	}

	/**
	 * The address applications connect to.
	 * @return {@code 127.0.0.1:P}, P the first forwarded port
	 */
	String address() {
		return LOOPBACK.getHostAddress() + ":" + this.routes.get(0).listenPort;
	}

	/**
	 * Listens again on every port (idempotent).
	 * @throws IOException if a port cannot be bound (then none listens)
	 * @throws IllegalStateException after {@link #close()}
	 */
	void up() throws IOException {
		synchronized (this.lock) {
			if (this.closed) {
				throw new IllegalStateException("closed");
			}
			if (this.up) {
				return;
			}
			List<ServerSocket> bound = new ArrayList<>();
			try {
				for (Route route : this.routes) {
					ServerSocket server = new ServerSocket();
					bound.add(server);
					server.setReuseAddress(true);
					server.bind(new InetSocketAddress(LOOPBACK, route.listenPort), 50);
				}
			}
			catch (IOException ex) {
				bound.forEach(TcpForwarder::closeQuietly);
				throw ex;
			}
			this.listening.addAll(bound);
			this.up = true;
			int current = this.generation;
			for (int i = 0; i < bound.size(); i++) {
				ServerSocket server = bound.get(i);
				Route route = this.routes.get(i);
				this.threads.execute(() -> accept(server, route, current));
			}
		}
	}

	/**
	 * Refuses new connections and cuts the forwarded ones (idempotent): the applications
	 * see their registry connection reset and cannot reconnect, the server sees its
	 * clients disconnect.
	 */
	void down() {
		synchronized (this.lock) {
			this.up = false;
			this.generation++;
			this.listening.forEach(TcpForwarder::closeQuietly);
			this.listening.clear();
		}
		for (Socket socket : this.open) {
			closeQuietly(socket);
		}
	}

	/**
	 * How many connections are being forwarded now.
	 * @return the number of open connections (each counts its two sockets once)
	 */
	int connections() {
		return this.open.size() / 2;
	}

	@Override
	public void close() {
		synchronized (this.lock) {
			this.closed = true;
		}
		down();
		this.threads.shutdownNow();
	}

	private void accept(ServerSocket server, Route route, int acceptedIn) {
		while (!server.isClosed()) {
			Socket client;
			try {
				client = server.accept();
			}
			catch (IOException ex) {
				return; // closed by down()
			}
			this.threads.execute(() -> connect(client, route, acceptedIn));
		}
	}

	private void connect(Socket client, Route route, int acceptedIn) {
		Socket target = new Socket();
		try {
			target.connect(new InetSocketAddress(route.targetHost, route.targetPort), 2_000);
		}
		catch (IOException ex) {
			closeQuietly(client);
			closeQuietly(target);
			return;
		}
		this.open.add(client);
		this.open.add(target);
		synchronized (this.lock) {
			if (this.generation != acceptedIn) {
				// down() ran while this connection was being set up
				closeQuietly(client);
				closeQuietly(target);
			}
		}
		try {
			this.threads.execute(() -> pump(client, target));
			this.threads.execute(() -> pump(target, client));
		}
		catch (RejectedExecutionException ex) {
			// closed meanwhile
			closeQuietly(client);
			closeQuietly(target);
		}
	}

	private void pump(Socket from, Socket to) {
		byte[] buffer = new byte[16 * 1024];
		try (InputStream in = from.getInputStream()) {
			OutputStream out = to.getOutputStream();
			int read;
			while ((read = in.read(buffer)) >= 0) {
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (IOException | UncheckedIOException ex) {
			// cut, or the other side went away: end both
		}
		finally {
			closeQuietly(from);
			closeQuietly(to);
			this.open.remove(from);
			this.open.remove(to);
		}
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// nothing to do
		}
	}

	private record Route(int listenPort, String targetHost, int targetPort) {
	}

}
