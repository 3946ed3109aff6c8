package dev.atlas.autoconfigure.eureka;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class EurekaDrainCheckTest {

	@Test
	void aDrainShorterThanTheFetchIntervalIsReportedNamingBothProperties() {
		assertThat(EurekaDrainCheck.warning(Duration.ofSeconds(10), 30))
			.hasValueSatisfying((warning) -> assertThat(warning).contains("atlas.lifecycle.drain (10000 ms)",
					"eureka.client.registry-fetch-interval-seconds (30 s)"));
	}

	@Test
	void aDrainAsLongAsTheFetchIntervalIsNot() {
		assertThat(EurekaDrainCheck.warning(Duration.ofSeconds(30), 30)).isEmpty();
		assertThat(EurekaDrainCheck.warning(Duration.ofSeconds(5), 5)).isEmpty();
		assertThat(EurekaDrainCheck.warning(Duration.ofMillis(4999), 5)).isPresent();
	}

}
