package dev.atlas.autoconfigure.lifecycle;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;

/**
 * Holds an auto-registration bean back until the application is ready: its
 * {@code onApplicationEvent} call with the application's own
 * {@link WebServerInitializedEvent} goes to {@link LosslessRegistration#defer} instead;
 * the management server's event (with {@code management.server.port} set), which
 * auto-registrations ignore, goes through unchanged. For an auto-registration that also
 * registers from {@code SmartLifecycle.start()} (Eureka's, at phase 0, before the web
 * server has even started when {@code server.port} is fixed), that call is skipped while
 * {@link LosslessRegistration#holdsLifecycleStart()}; the replayed event registers
 * instead.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class DeferredRegistrationAdvice implements MethodInterceptor {

	private final AutoRegistration registration;

	private final ObjectProvider<LosslessRegistration> lossless;

	private final boolean holdLifecycleStart;

	private DeferredRegistrationAdvice(AutoRegistration registration, ObjectProvider<LosslessRegistration> lossless,
			boolean holdLifecycleStart) {
		this.registration = registration;
		this.lossless = lossless;
		this.holdLifecycleStart = holdLifecycleStart;
	}

	/**
	 * A class-based proxy of {@code target} (registries' beans are concrete classes that
	 * other beans inject by type) with this advice.
	 * @param target the auto-registration bean, not {@code null}
	 * @param registration the same auto-registration, adapted; what
	 * {@link LosslessRegistration} replays the event on
	 * @param lossless where the event goes; without one
	 * ({@code atlas.lifecycle.register-when-ready=false}) every call goes through
	 * @param holdLifecycleStart whether to skip {@code start()} while
	 * {@link LosslessRegistration#holdsLifecycleStart()}
	 * @return the proxy, to be used as the bean
	 */
	public static Object advise(Object target, AutoRegistration registration,
			ObjectProvider<LosslessRegistration> lossless, boolean holdLifecycleStart) {
		return proxy(target, new DeferredRegistrationAdvice(registration, lossless, holdLifecycleStart));
	}

	static Object proxy(Object target, MethodInterceptor interceptor) {
		ProxyFactory factory = new ProxyFactory(target);
		factory.setProxyTargetClass(true);
		factory.addAdvice(interceptor);
		return factory.getProxy(target.getClass().getClassLoader());
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		String method = invocation.getMethod().getName();
		Object[] arguments = invocation.getArguments();
		if ("onApplicationEvent".equals(method) && arguments.length == 1
				&& arguments[0] instanceof WebServerInitializedEvent event
				&& !WebServerApplicationContext.hasServerNamespace(event.getApplicationContext(), "management")) {
			LosslessRegistration coordinator = this.lossless.getIfAvailable();
			if (coordinator == null) {
				return invocation.proceed();
			}
			this.registration.webServerStarted(event);
			coordinator.defer(this.registration, event);
			return null;
		}
		if (this.holdLifecycleStart && "start".equals(method) && arguments.length == 0) {
			LosslessRegistration coordinator = this.lossless.getIfAvailable();
			if (coordinator != null && coordinator.holdsLifecycleStart()) {
				return null;
			}
		}
		return invocation.proceed();
	}

}
