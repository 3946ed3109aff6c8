package dev.atlas.autoconfigure.zookeeper;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The per-service ZooKeeper watch, on a real in-process ZooKeeper. */
class ZookeeperInstanceChangeSourceTest {

	private TestingServer zookeeper;

	private CuratorFramework curator;

	@BeforeEach
	void start() throws Exception {
		this.zookeeper = new TestingServer(true);
		this.curator = CuratorFrameworkFactory.newClient(this.zookeeper.getConnectString(), new RetryOneTime(100));
		this.curator.start();
		this.curator.blockUntilConnected();
	}

	@AfterEach
	void stop() throws Exception {
		this.curator.close();
		this.zookeeper.close();
	}

	@Test
	void eachInstanceChangeOfTheWatchedServiceRunsTheSubscriberOthersDoNot() throws Exception {
		this.curator.create().creatingParentsIfNeeded().forPath("/services/user-service/a", "a".getBytes());
		ZookeeperInstanceChangeSource source = new ZookeeperInstanceChangeSource(this.curator, "/services", (id) -> id);
		AtomicInteger changes = new AtomicInteger();
		AtomicInteger otherChanges = new AtomicInteger();
		source.subscribe("user-service", changes::incrementAndGet);
		source.subscribe("user-service", otherChanges::incrementAndGet);
		assertThat(source.watchedServices()).containsExactly("user-service");

		this.curator.create()
			.creatingParentsIfNeeded()
			.withMode(CreateMode.EPHEMERAL)
			.forPath("/services/user-service/b", "b".getBytes());
		await().atMost(Duration.ofSeconds(5)).until(() -> changes.get() >= 1);
		int afterCreate = changes.get();
		this.curator.create().creatingParentsIfNeeded().forPath("/services/order-service/x", "x".getBytes());
		this.curator.delete().forPath("/services/user-service/a");
		await().atMost(Duration.ofSeconds(5)).until(() -> changes.get() > afterCreate);
		assertThat(otherChanges).hasValue(0);

		source.destroy();
		int afterClose = changes.get();
		this.curator.delete().forPath("/services/user-service/b");
		source.subscribe("order-service", changes::incrementAndGet);
		assertThat(source.watchedServices()).isEmpty();
		assertThat(changes).hasValue(afterClose);
	}

	@Test
	void aServiceNotYetRegisteredIsWatchedFromItsFirstInstance() {
		ZookeeperInstanceChangeSource source = new ZookeeperInstanceChangeSource(this.curator, "/services",
				(id) -> "aliased/" + id);
		AtomicInteger changes = new AtomicInteger();
		source.subscribe("late", changes::incrementAndGet);
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			this.curator.create().orSetData().creatingParentsIfNeeded().forPath("/services/aliased/late/i1");
			assertThat(changes.get()).isPositive();
		});
		source.destroy();
	}

}
