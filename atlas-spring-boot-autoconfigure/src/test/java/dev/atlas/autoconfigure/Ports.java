package dev.atlas.autoconfigure;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/** Loopback ports for the integration tests. */
public final class Ports {

	private Ports() {
	}

	/**
	 * A port nothing listens on right now (the operating system's choice; another process
	 * may take it before the caller does).
	 * @return the port
	 * @throws IOException if no port can be opened
	 */
	public static int free() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	/**
	 * Whether something accepts connections on {@code 127.0.0.1:port} (200 ms connect
	 * timeout).
	 * @param port the port
	 * @return {@code true} if a connection was accepted
	 */
	public static boolean listening(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
