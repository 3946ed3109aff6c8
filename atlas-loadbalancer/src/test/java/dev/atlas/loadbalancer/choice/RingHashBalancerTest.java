package dev.atlas.loadbalancer.choice;

import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.context.HashKeys;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.fleet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/** Ring hash: stickiness, spread, movement on membership changes, bounded load, keys. */
class RingHashBalancerTest {

	private static final HashRules BY_USER = new HashRules("X-User-Id", "user", 160, false, 1.25);

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private RingHashBalancer balancer(HashRules rules) {
		SplittableRandom seeded = new SplittableRandom(42);
		return new RingHashBalancer(TestPickContext.settings(this.meters), rules, () -> seeded);
	}

	private InstanceSnapshot snapshot(List<ServiceInstance> instances) {
		return InstanceSnapshot.of(instances, new InstanceAttributesParser(SERVICE, "version", this.meters));
	}

	private static ServiceInstance at(String id, int port, String weight) {
		return new DefaultServiceInstance(id, SERVICE, "10.0.0.1", port, false, Map.of("weight", weight));
	}

	/** The instance id each of {@code keys} user ids maps to. */
	private static List<String> assign(RingHashBalancer balancer, InstanceSnapshot snapshot, int keys) {
		List<String> owners = new ArrayList<>(keys);
		for (int user = 0; user < keys; user++) {
			TestPickContext context = new TestPickContext(snapshot.size()).header("x-user-id", "user-" + user);
			owners.add(snapshot.get(balancer.choose(snapshot, context)).getInstanceId());
		}
		return owners;
	}

	@Test
	void theSameKeyAlwaysReachesTheSameInstanceAcrossSnapshotsAndBalancers() {
		List<ServiceInstance> fleet = fleet(5);
		List<String> first = assign(balancer(BY_USER), snapshot(fleet), 1_000);
		// A refresh (new snapshot, other order) and another caller (new balancer).
		List<ServiceInstance> reordered = new ArrayList<>(fleet(5));
		Collections.reverse(reordered);
		assertThat(assign(balancer(BY_USER), snapshot(reordered), 1_000)).isEqualTo(first);
	}

	@Test
	void keysSpreadByWeight() {
		// 10,000 keys; 160 points per instance keep each share within a few points.
		List<String> owners = assign(balancer(BY_USER),
				snapshot(List.of(at("A", 1, "1"), at("B", 2, "1"), at("C", 3, "2"))), 10_000);
		assertThat(owners.stream().filter("C"::equals).count() / 10_000.0).isCloseTo(0.5, within(0.05));
		assertThat(owners.stream().filter("A"::equals).count() / 10_000.0).isCloseTo(0.25, within(0.05));
	}

	@Test
	void whenAnInstanceLeavesOnlyItsKeysMove() {
		List<ServiceInstance> ten = fleet(10);
		List<String> before = assign(balancer(BY_USER), snapshot(ten), 10_000);
		List<String> after = assign(balancer(BY_USER), snapshot(ten.subList(0, 9)), 10_000);
		int moved = 0;
		for (int i = 0; i < before.size(); i++) {
			if (!before.get(i).equals(after.get(i))) {
				assertThat(before.get(i)).isEqualTo("i9");
				moved++;
			}
		}
		assertThat(moved / 10_000.0).isCloseTo(0.1, within(0.03));
	}

	@Test
	void whenAnInstanceJoinsKeysMoveOnlyToIt() {
		List<ServiceInstance> ten = fleet(10);
		List<String> before = assign(balancer(BY_USER), snapshot(ten.subList(0, 9)), 10_000);
		List<String> after = assign(balancer(BY_USER), snapshot(ten), 10_000);
		for (int i = 0; i < before.size(); i++) {
			if (!before.get(i).equals(after.get(i))) {
				assertThat(after.get(i)).isEqualTo("i9");
			}
		}
	}

	@Test
	void aWarmingInstanceTakesAGrowingShareOfExactlyTheKeysItWillOwnAndNoOtherKeyMoves() {
		List<ServiceInstance> ten = fleet(10);
		RingHashBalancer balancer = balancer(BY_USER);
		InstanceSnapshot warm = snapshot(ten);
		List<String> withoutIt = assign(balancer(BY_USER), snapshot(ten.subList(0, 9)), 10_000);
		List<String> owned = assign(balancer, warm, 10_000);
		long ownedWhenWarm = owned.stream().filter("i9"::equals).count();
		Set<Integer> previous = Set.of();
		for (double factor : new double[] { 0.0, 0.1, 0.3, 0.6, 1.0 }) {
			double[] weights = warm.effectiveWeights();
			weights[9] = factor;
			List<String> now = assign(balancer, warm.withEffectiveWeights(weights), 10_000);
			Set<Integer> onIt = new HashSet<>();
			for (int key = 0; key < now.size(); key++) {
				if (now.get(key).equals("i9")) {
					onIt.add(key);
					assertThat(owned.get(key)).isEqualTo("i9");
				}
				else {
					// Where the key goes without the warming instance.
					assertThat(now.get(key)).isEqualTo(withoutIt.get(key));
				}
			}
			assertThat(onIt).containsAll(previous);
			assertThat(onIt.size() / (double) ownedWhenWarm).isCloseTo(factor, within(0.05));
			previous = onIt;
		}
		// Every warmup tick is a new snapshot of the same instances: one ring for all.
		assertThat(balancer.ringsKept()).isEqualTo(1);
	}

	@Test
	void aFleetWarmingUpAsAWholeKeepsItsKeysWhereTheyAre() {
		List<ServiceInstance> ten = fleet(10);
		RingHashBalancer balancer = balancer(BY_USER);
		InstanceSnapshot warm = snapshot(ten);
		List<String> owned = assign(balancer, warm, 2_000);
		double[] weights = warm.effectiveWeights();
		Arrays.fill(weights, 0.1);
		assertThat(assign(balancer, warm.withEffectiveWeights(weights), 2_000)).isEqualTo(owned);
	}

	@Test
	void severalWarmingInstancesEachGetAboutTheirEffectiveShare() {
		List<ServiceInstance> fleet = List.of(at("A", 1, "1"), at("B", 2, "1"), at("C", 3, "1"), at("D", 4, "1"));
		RingHashBalancer balancer = balancer(BY_USER);
		InstanceSnapshot snapshot = snapshot(fleet);
		List<String> warm = assign(balancer, snapshot, 20_000);
		double[] weights = { 0.5, 0.5, 1, 1 };
		List<String> warming = assign(balancer, snapshot.withEffectiveWeights(weights), 20_000);
		// Each keeps about half of the keys it owns when warm (its own chance per key),
		// and takes some of the keys its warming neighbour passes on: between f × its
		// warm
		// share (12.5 %) and its share of the effective weights (0.5 / 3 = 16.7 %). With
		// one chance per key for both, a key passed on by one would be passed on by the
		// other too (12.7 % and 13.0 % measured).
		for (String id : List.of("A", "B")) {
			long owned = warm.stream().filter(id::equals).count();
			int ownedAndKept = 0;
			for (int key = 0; key < warm.size(); key++) {
				ownedAndKept += (warm.get(key).equals(id) && warming.get(key).equals(id)) ? 1 : 0;
			}
			assertThat(ownedAndKept / (double) owned).as(id).isCloseTo(0.5, within(0.03));
			assertThat(warming.stream().filter(id::equals).count() / 20_000.0).as(id).isBetween(0.135, 0.167);
		}
	}

	@Test
	void theCookieComesFromSpringCloudsRequestDataAsWebClientFillsIt() {
		InstanceSnapshot snapshot = snapshot(fleet(10));
		RingHashBalancer balancer = balancer(new HashRules(null, "user", 160, false, 1.25));
		int byValue = balancer.choose(snapshot, new TestPickContext(10).header("cookie", "user=42"));
		LinkedMultiValueMap<String, String> cookies = new LinkedMultiValueMap<>();
		cookies.add("user", "42");
		TestPickContext webClient = new TestPickContext(10);
		webClient.request = new DefaultRequest<>(new RequestDataContext(new RequestData(HttpMethod.GET,
				URI.create("http://user-service/"), new HttpHeaders(), cookies, Map.of())));
		assertThat(balancer.choose(snapshot, webClient)).isEqualTo(byValue);
		assertThat(this.meters.get(RingHashBalancer.MISSING_KEY_METER).counter().count()).isZero();
	}

	@Test
	void aboveSixtyFourCandidatesBoundedLoadUsesTheServicesInFlightTotal() {
		InstanceSnapshot snapshot = snapshot(fleet(100));
		RingHashBalancer bounded = balancer(new HashRules("x-user-id", null, 160, true, 1.25));
		TestPickContext context = new TestPickContext(100).header("x-user-id", "hot");
		int owner = bounded.choose(snapshot, context);
		context.inFlight[owner] = 3;
		// 3 in flight of 3: capacity ceil(1.25 × 4 / 100) = 1, the owner is passed over.
		context.serviceInFlight = 3;
		assertThat(bounded.choose(snapshot, context)).isNotEqualTo(owner);
		// 300 in flight to the service (other lanes): capacity ceil(1.25 × 301 / 100) =
		// 4.
		context.serviceInFlight = 300;
		assertThat(bounded.choose(snapshot, context)).isEqualTo(owner);
	}

	@Test
	void theCookieHeaderAsSentWinsOverSpringCloudsCookieMap() {
		InstanceSnapshot snapshot = snapshot(fleet(10));
		RingHashBalancer balancer = balancer(new HashRules(null, "user", 160, false, 1.25));
		int byValue = balancer.choose(snapshot, new TestPickContext(10).header("cookie", "user=42"));
		// What Spring Cloud's RequestData(HttpRequest) makes of "a=1; user=42": {a=[1;
		// user]}.
		LinkedMultiValueMap<String, String> split = new LinkedMultiValueMap<>();
		split.add("a", "1; user");
		TestPickContext restTemplate = new TestPickContext(10).header("cookie", "a=1; user=42");
		restTemplate.request = new DefaultRequest<>(new RequestDataContext(new RequestData(HttpMethod.GET,
				URI.create("http://user-service/"), new HttpHeaders(), split, Map.of())));
		assertThat(balancer.choose(snapshot, restTemplate)).isEqualTo(byValue);
		assertThat(this.meters.get(RingHashBalancer.MISSING_KEY_METER).counter().count()).isZero();
	}

	@Test
	void whenEveryInstanceLooksFullBoundedLoadStaysOnAnInstanceTheKeyMayUse() {
		// Counts that do not add up (a stale service total): every instance is at its
		// bound. The key's first instance is drained by an adjuster (effective weight 0):
		// it must not be the fallback.
		InstanceSnapshot full = snapshot(fleet(100));
		RingHashBalancer bounded = balancer(new HashRules("x-user-id", null, 160, true, 1.25));
		TestPickContext context = new TestPickContext(100).header("x-user-id", "k");
		int owner = bounded.choose(full, context);
		double[] weights = full.effectiveWeights();
		weights[owner] = 0;
		Arrays.fill(context.inFlight, 5);
		context.serviceInFlight = 0;
		int chosen = bounded.choose(full.withEffectiveWeights(weights), context);
		assertThat(chosen).isNotEqualTo(owner);
	}

	@Test
	void drainedInstancesGetNoKey() {
		List<String> owners = assign(balancer(BY_USER),
				snapshot(List.of(at("A", 1, "0"), at("B", 2, "1"), at("C", 3, "1"))), 2_000);
		assertThat(owners).doesNotContain("A").contains("B", "C");
	}

	@Test
	void boundedLoadPassesOverAFullInstanceToTheNextClockwise() {
		InstanceSnapshot snapshot = snapshot(fleet(4));
		RingHashBalancer bounded = balancer(new HashRules("x-user-id", null, 160, true, 1.25));
		TestPickContext context = new TestPickContext(4).header("x-user-id", "hot");
		int owner = bounded.choose(snapshot, context);
		// Total in flight 4, all at the owner: capacity ceil(1.25 × 5 / 4) = 2 per
		// instance; the owner is full.
		context.inFlight[owner] = 4;
		int next = bounded.choose(snapshot, context);
		assertThat(next).isNotEqualTo(owner);
		// Without bounded load, the key stays.
		assertThat(balancer(BY_USER).choose(snapshot, context)).isEqualTo(owner);
		// Below capacity (1 in flight, capacity ceil(1.25 × 2 / 4) = 1: full; 1 of 5 in
		// flight elsewhere too: capacity ceil(1.25 × 3 / 4) = 1): owner again at 0.
		context.inFlight[owner] = 0;
		context.inFlight[next] = 3;
		assertThat(bounded.choose(snapshot, context)).isEqualTo(owner);
	}

	@Test
	void boundedLoadKeepsEveryInstanceWithinTheFactorOfTheMean() {
		// Keys held in flight, one after another (the paper's setting).
		InstanceSnapshot snapshot = snapshot(fleet(10));
		RingHashBalancer bounded = balancer(new HashRules("x-user-id", null, 160, true, 1.25));
		TestPickContext context = new TestPickContext(10);
		int total = 0;
		for (int user = 0; user < 10_000; user++) {
			context.header("x-user-id", "user-" + (user % 100));
			int chosen = bounded.choose(snapshot, context);
			context.inFlight[chosen]++;
			total++;
			assertThat(context.inFlight[chosen]).isLessThanOrEqualTo((int) Math.ceil(1.25 * total / 10.0));
		}
	}

	@Test
	void theKeyComesFromTheHeaderElseTheCookie() {
		InstanceSnapshot snapshot = snapshot(fleet(10));
		RingHashBalancer balancer = balancer(BY_USER);
		int byHeader = balancer.choose(snapshot, new TestPickContext(10).header("x-user-id", "42"));
		assertThat(balancer.choose(snapshot, new TestPickContext(10).header("cookie", "a=1; user=42; b=2")))
			.isEqualTo(byHeader);
		assertThat(balancer.choose(snapshot, new TestPickContext(10).header("cookie", "user=\"42\"")))
			.isEqualTo(byHeader);
		assertThat(balancer.choose(snapshot, new TestPickContext(10).header("cookie", "user=42"))).isEqualTo(byHeader);
	}

	@Test
	void cookiesAreMatchedByWholeName() {
		long hash42 = HashRing.hash("42", 0, 2);
		assertThat(HashKeys.cookieHash("a=1;user=42", "user")).isEqualTo(hash42);
		assertThat(HashKeys.cookieHash("xuser=1; user=42 ", "user")).isEqualTo(hash42);
		assertThat(HashKeys.cookieHash("username=1", "user")).isEqualTo(Long.MIN_VALUE);
		assertThat(HashKeys.cookieHash("user=; a=1", "user")).isEqualTo(Long.MIN_VALUE);
		assertThat(HashKeys.cookieHash("", "user")).isEqualTo(Long.MIN_VALUE);
		assertThat(HashKeys.cookieHash("user", "user")).isEqualTo(Long.MIN_VALUE);
	}

	@Test
	void requestsWithoutAKeyAreBalancedByWeightAndCounted() {
		InstanceSnapshot snapshot = snapshot(List.of(at("A", 1, "1"), at("B", 2, "3")));
		RingHashBalancer balancer = balancer(BY_USER);
		int b = 0;
		for (int i = 0; i < 10_000; i++) {
			b += balancer.choose(snapshot, new TestPickContext(2));
		}
		assertThat(b / 10_000.0).isCloseTo(0.75, within(0.02));
		assertThat(this.meters.get(RingHashBalancer.MISSING_KEY_METER).tag("service", SERVICE).counter().count())
			.isEqualTo(10_000);
	}

	@Test
	void rulesAreValidatedNamingTheProperty() {
		assertThatIllegalArgumentException().isThrownBy(() -> new HashRules("h", null, 0, false, 1.25))
			.withMessage("virtual-nodes must be an integer >= 1, was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new HashRules("h", null, 160, true, 1.0))
			.withMessage("load-factor must be a finite number > 1, was 1.0");
		assertThat(new HashRules(" X-User-Id ", " ", 1, false, 2).header()).isEqualTo("x-user-id");
		assertThat(new HashRules(" X-User-Id ", " ", 1, false, 2).cookie()).isNull();
	}

	@Test
	void aLargeFleetGetsFewerPointsPerInstanceWithinTheCap() {
		InstanceSnapshot snapshot = snapshot(fleet(10_000));
		HashRing ring = HashRing.of(keys(snapshot), snapshot.effectiveWeights(), 160);
		assertThat(ring.size()).isLessThanOrEqualTo(HashRing.MAX_POINTS).isGreaterThan(HashRing.MAX_POINTS - 10_000);
		// 104.86 points each, rounded down.
		assertThat(ring.size()).isEqualTo(1_040_000);
	}

	private static InstanceKey[] keys(InstanceSnapshot snapshot) {
		InstanceKey[] keys = new InstanceKey[snapshot.size()];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = snapshot.key(i);
		}
		return keys;
	}

}
