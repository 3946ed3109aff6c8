package dev.atlas.autoconfigure.lifecycle;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DeferredRegistryCloseTest {

	private final AtomicBoolean shuttingDown = new AtomicBoolean();

	private final List<String> closed = new CopyOnWriteArrayList<>();

	private final DeferredRegistryClose closes = new DeferredRegistryClose(this.shuttingDown::get);

	@Test
	void beforeTheShutdownSequenceACloseIsNotHeld() {
		this.closes.start();
		assertThat(this.closes.defer(() -> this.closed.add("restart"))).isFalse();
		this.closes.stop();
		assertThat(this.closed).isEmpty();
	}

	@Test
	void duringTheShutdownSequenceClosesWaitForTheLastPhaseAndRunInOrder() {
		this.closes.start();
		this.shuttingDown.set(true);
		assertThat(this.closes.defer(() -> this.closed.add("first"))).isTrue();
		assertThat(this.closes.defer(() -> this.closed.add("second"))).isTrue();
		assertThat(this.closed).isEmpty();
		assertThat(this.closes.getPhase()).isEqualTo(Integer.MIN_VALUE);
		this.closes.stop();
		assertThat(this.closed).containsExactly("first", "second");
		assertThat(this.closes.isRunning()).isFalse();
	}

	@Test
	void afterTheLastPhaseACloseRunsAtOnceAndNothingRunsTwice() {
		this.closes.start();
		this.shuttingDown.set(true);
		this.closes.defer(() -> this.closed.add("held"));
		this.closes.stop();
		assertThat(this.closes.defer(() -> this.closed.add("late"))).isFalse();
		this.closes.destroy();
		assertThat(this.closed).containsExactly("held");
	}

	@Test
	void aFailedStartupThatNeverStoppedTheLifecycleStillClosesOnDestroy() {
		this.shuttingDown.set(true);
		this.closes.defer(() -> this.closed.add("held"));
		this.closes.defer(() -> {
			throw new IllegalStateException("close failed on purpose");
		});
		this.closes.destroy();
		assertThat(this.closed).containsExactly("held");
	}

}
