package dev.atlas.autoconfigure.zookeeper;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

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
	void confirmsNoInstancesOnlyWhenTheWatchHoldsNoInstanceNodeNotDuringAnOutage() throws Exception {
		this.curator.create().creatingParentsIfNeeded().forPath("/services/user-service/a", "a".getBytes());
		ZookeeperInstanceChangeSource source = new ZookeeperInstanceChangeSource(this.curator, "/services", (id) -> id);
		assertThat(source.confirmsNoInstances("user-service")).as("not watched yet").isFalse();
		source.subscribe("user-service", () -> {
		});
		await().atMost(Duration.ofSeconds(5)).until(() -> source.watchedServices().contains("user-service"));
		await().during(Duration.ofMillis(300))
			.atMost(Duration.ofSeconds(5))
			.until(() -> !source.confirmsNoInstances("user-service"));
		// the registry is unreachable: the watch keeps what it holds, nothing is
		// confirmed
		this.zookeeper.stop();
		await().during(Duration.ofMillis(500))
			.atMost(Duration.ofSeconds(5))
			.until(() -> !source.confirmsNoInstances("user-service"));
		this.zookeeper.restart();
		this.curator.blockUntilConnected();
		// the last instance deregisters: its node is deleted
		this.curator.delete().forPath("/services/user-service/a");
		await().atMost(Duration.ofSeconds(5)).until(() -> source.confirmsNoInstances("user-service"));
		source.destroy();
		assertThat(source.confirmsNoInstances("user-service")).as("closed").isFalse();
	}

	@Test
	void aServiceNotYetRegisteredIsWatchedFromItsFirstInstance() throws Exception {
		ZookeeperInstanceChangeSource source = new ZookeeperInstanceChangeSource(this.curator, "/services",
				(id) -> "aliased/" + id);
		AtomicInteger changes = new AtomicInteger();
		source.subscribe("late", changes::incrementAndGet);
		this.curator.create().creatingParentsIfNeeded().forPath("/services/aliased/late/i1");
		// the service's node and the instance's node: two creations, whether the watch or
		// its initial load sees them
		await().atMost(Duration.ofSeconds(5)).during(Duration.ofMillis(500)).until(() -> changes.get() == 2);
		source.destroy();
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aWatchThatHasNotLoadedIsStartedAgainAtTheNextSubscriptionWithOneWarn(CapturedOutput output) throws Exception {
		try (CuratorFramework notYetStarted = CuratorFrameworkFactory.newClient(this.zookeeper.getConnectString(),
				new RetryOneTime(100))) {
			ZookeeperInstanceChangeSource source = new ZookeeperInstanceChangeSource(notYetStarted, "/services",
					(id) -> id, Duration.ZERO);
			AtomicInteger changes = new AtomicInteger();
			Runnable none = () -> {
			};
			// the client is not started yet: no watch can load
			source.subscribe("first", changes::incrementAndGet);
			source.subscribe("second", none);
			source.subscribe("third", none);
			assertThat(warnings(output, "first")).as("one WARN per service").isEqualTo(1);
			assertThat(warnings(output, "second")).isEqualTo(1);

			notYetStarted.start();
			notYetStarted.blockUntilConnected();
			source.subscribe("fourth", none);
			assertThat(source.watchedServices()).containsExactlyInAnyOrder("first", "second", "third", "fourth");
			this.curator.create().creatingParentsIfNeeded().forPath("/services/first/i1");
			// the service's node and the instance's node
			await().atMost(Duration.ofSeconds(5)).during(Duration.ofMillis(500)).until(() -> changes.get() == 2);
			assertThat(warnings(output, "first")).isEqualTo(1);
			source.destroy();
		}
	}

	private static int warnings(CapturedOutput output, String serviceId) {
		String warning = "(service '" + serviceId + "') did not start within 0 s";
		return output.getOut().split(Pattern.quote(warning), -1).length - 1;
	}

	@Test
	void aSubscriptionRacingWithDestroyLeavesNoWatchOpen() throws Exception {
		AtomicReference<ZookeeperInstanceChangeSource> source = new AtomicReference<>();
		source.set(new ZookeeperInstanceChangeSource(this.curator, "/services", (id) -> {
			source.get().destroy(); // the context closes while the watch is being set up
			return id;
		}));
		AtomicInteger changes = new AtomicInteger();
		source.get().subscribe("racing", changes::incrementAndGet);
		assertThat(source.get().watchedServices()).isEmpty();
		this.curator.create().creatingParentsIfNeeded().forPath("/services/racing/i1");
		await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> changes.get() == 0);
	}

}
