package dev.atlas.autoconfigure.lifecycle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;

/**
 * A real ZooKeeper running in-process and a Curator client of the test's own that reads
 * what applications registered in it (Spring Cloud ZooKeeper's {@code /services/{id}}
 * nodes). Not thread-safe.
 */
final class ZooKeeperRegistry implements AutoCloseable {

	private final TestingServer server;

	private final CuratorFramework curator;

	/**
	 * Starts the server and connects the client (up to 10 s).
	 * @throws Exception if ZooKeeper cannot start
	 */
	ZooKeeperRegistry() throws Exception {
		this.server = new TestingServer(true);
		this.curator = CuratorFrameworkFactory.newClient(this.server.getConnectString(), new RetryOneTime(100));
		this.curator.start();
		this.curator.blockUntilConnected(10, TimeUnit.SECONDS);
	}

	/**
	 * Where applications connect.
	 * @return {@code host:port}
	 */
	String connectString() {
		return this.server.getConnectString();
	}

	/**
	 * The instances registered under a service.
	 * @param serviceId the service
	 * @return their node names (instance ids), empty when none
	 * @throws Exception if ZooKeeper cannot be read
	 */
	List<String> registered(String serviceId) throws Exception {
		String path = "/services/" + serviceId;
		return (this.curator.checkExists().forPath(path) == null) ? List.of()
				: this.curator.getChildren().forPath(path);
	}

	/**
	 * What the first registered instance of a service holds: its JSON payload.
	 * @param serviceId the service
	 * @return the payload
	 * @throws Exception if ZooKeeper cannot be read or nothing is registered
	 */
	String firstPayload(String serviceId) throws Exception {
		String path = "/services/" + serviceId;
		return new String(this.curator.getData().forPath(path + "/" + this.curator.getChildren().forPath(path).get(0)),
				StandardCharsets.UTF_8);
	}

	@Override
	public void close() throws IOException {
		this.curator.close();
		this.server.close();
	}

}
