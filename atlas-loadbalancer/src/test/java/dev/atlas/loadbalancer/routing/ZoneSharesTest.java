package dev.atlas.loadbalancer.routing;

import java.util.List;

import dev.atlas.loadbalancer.routing.ZoneShares.Inactive;
import dev.atlas.loadbalancer.routing.ZoneShares.Zone;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class ZoneSharesTest {

	private static Zone zone(String name, double callers, int providers) {
		return new Zone(name, callers, providers, providers, providers);
	}

	private static Zone zone(String name, double callers, int providers, int healthy) {
		return new Zone(name, callers, providers, healthy, providers);
	}

	@Test
	void equalCallersAndProvidersStayLocal() {
		ZoneShares shares = ZoneShares.compute("a", List.of(zone("a", 6, 6), zone("b", 6, 6)), 6);
		assertThat(shares.inactive()).isNull();
		assertThat(shares.localShare()).isEqualTo(1.0);
		assertThat(shares.share(1)).isZero();
	}

	@Test
	void aThinZoneKeepsWhatItsProvidersCanTakeAndSendsTheRestWhereCapacityIsSpare() {
		// callers 6/6, providers 2/10: zone a's callers keep 2/12 ÷ 6/12 = 1/3
		ZoneShares inA = ZoneShares.compute("a", List.of(zone("a", 6, 2), zone("b", 6, 10)), 6);
		assertThat(inA.localShare()).isCloseTo(1 / 3.0, within(1e-9));
		assertThat(inA.share(1)).isCloseTo(2 / 3.0, within(1e-9));
		ZoneShares inB = ZoneShares.compute("b", List.of(zone("a", 6, 2), zone("b", 6, 10)), 6);
		assertThat(inB.localShare()).isEqualTo(1.0);
		// every provider equally loaded: zone a's 2 take 6 × 1/3 = 2 callers' demand,
		// zone b's 10 take 6 + 6 × 2/3 = 10
		assertThat(6 * inA.localShare() / 2).isCloseTo((6 + 6 * inA.share(1)) / 10, within(1e-9));
	}

	@Test
	void theResidualGoesToTheZonesWithSpareCapacityInProportion() {
		// callers 4/4/4 (1/3 each); providers 1/3/8 of 12: a keeps (1/12) / (1/3) = 1/4;
		// spare: b 3/12 − 4/12 < 0, c 8/12 − 4/12 = 4/12: everything goes to c
		ZoneShares shares = ZoneShares.compute("a", List.of(zone("a", 4, 1), zone("b", 4, 3), zone("c", 4, 8)), 6);
		assertThat(shares.localShare()).isCloseTo(0.25, within(1e-9));
		assertThat(shares.share(1)).isZero();
		assertThat(shares.share(2)).isCloseTo(0.75, within(1e-9));
	}

	@Test
	void weightsCountInsteadOfInstances() {
		// two providers of weight 3 in a, six of weight 1 in b: capacity 6/6
		ZoneShares shares = ZoneShares.compute("a", List.of(new Zone("a", 6, 6, 6, 2), new Zone("b", 6, 6, 6, 6)), 6);
		assertThat(shares.localShare()).isEqualTo(1.0);
	}

	@Test
	void aZoneKeepsAllItsTrafficUntilFewerThan71PercentOfItsProvidersAreHealthyThenShedsInProportion() {
		double previous = 1;
		for (int healthy = 10; healthy >= 0; healthy--) {
			ZoneShares shares = ZoneShares.compute("a", List.of(zone("a", 6, 10, healthy), zone("b", 6, 10)), 6);
			double expected = Math.min(1, 1.4 * healthy / 10);
			assertThat(shares.localShare()).as("%d of 10 healthy", healthy).isCloseTo(expected, within(1e-9));
			assertThat(shares.share(1)).isCloseTo(1 - expected, within(1e-9));
			assertThat(previous - shares.localShare()).isLessThanOrEqualTo(0.14 + 1e-9);
			if (healthy > 0) {
				// a surviving local provider's load against its normal load (6 callers'
				// demand over 10 providers)
				assertThat((6 * shares.localShare() / healthy) / (6 / 10.0)).isLessThanOrEqualTo(1.4 + 1e-9);
			}
			previous = shares.localShare();
		}
	}

	@Test
	void withEveryZoneDegradedEachKeepsItsPartOfWhatIsHealthy() {
		// 1 of 10 healthy in a (m 0.14), 3 of 10 in b (m 0.42): 0.14 / 0.56 stays in a,
		// 0.42 / 0.56 in b, whichever zone the caller is in
		List<Zone> zones = List.of(zone("a", 6, 10, 1), zone("b", 6, 10, 3));
		ZoneShares inA = ZoneShares.compute("a", zones, 6);
		ZoneShares inB = ZoneShares.compute("b", zones, 6);
		assertThat(inA.localShare()).isCloseTo(0.25, within(1e-9));
		assertThat(inB.localShare()).isCloseTo(0.75, within(1e-9));
		// every survivor equally loaded: a's 1 takes 6 × 0.25 + 6 × 0.25 = 3 callers'
		// demand, each of b's 3 takes (6 × 0.75 + 6 × 0.75) / 3 = 3
		double survivorA = 6 * inA.localShare() + 6 * inB.share(0);
		double survivorB = (6 * inA.share(1) + 6 * inB.localShare()) / 3;
		assertThat(survivorA).isCloseTo(survivorB, within(1e-9));
	}

	@Test
	void withNoHealthyProviderAnywhereZoneRoutingIsOff() {
		ZoneShares shares = ZoneShares.compute("a", List.of(zone("a", 6, 10, 0), zone("b", 6, 10, 0)), 6);
		assertThat(shares.inactive()).isEqualTo(Inactive.NO_HEALTHY_CAPACITY);
		assertThat(shares.zoneFor(0.1)).isEqualTo(-1);
	}

	@Test
	void whenNoOtherZoneIsHealthyTheTrafficStays() {
		ZoneShares shares = ZoneShares.compute("a", List.of(zone("a", 6, 10, 3), zone("b", 6, 10, 0)), 6);
		assertThat(shares.localShare()).isEqualTo(1.0);
	}

	@Test
	void zoneRoutingIsOffWithTheReason() {
		assertThat(ZoneShares.compute("a", List.of(zone("a", 6, 2), zone("b", 6, 3)), 6).inactive())
			.isEqualTo(Inactive.TOO_SMALL);
		assertThat(ZoneShares.compute(null, List.of(zone("a", 6, 6), zone("b", 6, 6)), 6).inactive())
			.isEqualTo(Inactive.NO_LOCAL_ZONE);
		assertThat(ZoneShares.compute("a", List.of(zone("a", 0, 6), zone("b", 0, 6)), 6).inactive())
			.isEqualTo(Inactive.NO_CALLER_DISTRIBUTION);
		assertThat(ZoneShares.compute("c", List.of(zone("a", 6, 6), zone("b", 6, 6)), 6).inactive())
			.isEqualTo(Inactive.NO_CALLER_DISTRIBUTION);
		assertThat(ZoneShares.compute("a", List.of(new Zone("a", 6, 0, 0, 6), new Zone("b", 6, 0, 0, 6)), 6).inactive())
			.isEqualTo(Inactive.NO_CAPACITY);
		ZoneShares off = ZoneShares.compute("a", List.of(zone("a", 6, 2), zone("b", 6, 3)), 6);
		assertThat(off.zoneFor(0.5)).isEqualTo(-1);
		assertThat(off.toString()).contains("minimum cluster size");
	}

	@Test
	void aDrawPicksTheZoneByItsShare() {
		ZoneShares shares = ZoneShares.compute("a", List.of(zone("a", 6, 2), zone("b", 6, 10)), 6);
		assertThat(shares.zoneFor(0.0)).isZero();
		assertThat(shares.zoneFor(0.33)).isZero();
		assertThat(shares.zoneFor(0.34)).isEqualTo(1);
		assertThat(shares.zoneFor(0.999999)).isEqualTo(1);
	}

	@Test
	void invalidInputIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new Zone("a", -1, 1, 1, 1));
		assertThatIllegalArgumentException().isThrownBy(() -> new Zone("a", 1, 1, 2, 1));
		assertThatIllegalArgumentException().isThrownBy(() -> new Zone("a", Double.NaN, 1, 1, 1));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> ZoneShares.compute("a", List.of(zone("a", 1, 1), zone("a", 1, 1)), 0));
		assertThatIllegalArgumentException().isThrownBy(() -> ZoneShares.compute("a", List.of(zone("a", 1, 1)), -1));
	}

}
