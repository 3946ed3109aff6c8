package dev.atlas.autoconfigure.lifecycle;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.cloud.client.serviceregistry.ServiceRegistry;

/**
 * Atlas's advice on every {@link ServiceRegistry} bean (a class-based proxy: registries
 * are concrete classes that other beans inject by type), the one place where Atlas sees
 * what the application's registry client does:
 * <ul>
 * <li>{@code register}: stamps the registration ({@link RegistrationMetadata}) before it
 * goes out, and, once the registry accepted it (returned), reports it to
 * {@link RegistrationMetadata#registered} and {@link RegistrationStatus}. A registry that
 * refuses by throwing (Nacos with {@code fail-fast}, ZooKeeper) is not reported, and its
 * exception goes on to the caller unchanged, so the registry's own failure semantics
 * hold;</li>
 * <li>{@code deregister}: reported to {@link RegistrationStatus} once it returned;</li>
 * <li>{@code close()}: handed to {@link DeferredRegistryClose} once the shutdown sequence
 * has begun, so the registry client closes last.</li>
 * </ul>
 * Thread-safe.
 */
final class ServiceRegistryInterceptor implements MethodInterceptor {

	private final ObjectProvider<RegistrationMetadata> metadata;

	private final ObjectProvider<RegistrationStatus> status;

	private final ObjectProvider<DeferredRegistryClose> closes;

	ServiceRegistryInterceptor(ObjectProvider<RegistrationMetadata> metadata, ObjectProvider<RegistrationStatus> status,
			ObjectProvider<DeferredRegistryClose> closes) {
		this.metadata = metadata;
		this.status = status;
		this.closes = closes;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		String method = invocation.getMethod().getName();
		Object[] arguments = invocation.getArguments();
		if ("register".equals(method) && arguments.length == 1 && arguments[0] instanceof Registration registration) {
			RegistrationMetadata stamper = this.metadata.getIfAvailable();
			long stampedAt = (stamper != null) ? stamper.stamp(registration) : -1;
			Object result = invocation.proceed();
			if (stamper != null) {
				stamper.registered(stampedAt);
			}
			this.status.ifAvailable((status) -> status.registered(registration));
			return result;
		}
		if ("deregister".equals(method) && arguments.length == 1 && arguments[0] instanceof Registration registration) {
			Object result = invocation.proceed();
			this.status.ifAvailable((status) -> status.deregistered(registration));
			return result;
		}
		if ("close".equals(method) && arguments.length == 0
				&& invocation.getThis() instanceof ServiceRegistry<?> registry) {
			DeferredRegistryClose deferred = this.closes.getIfAvailable();
			if (deferred != null && deferred.defer(registry::close)) {
				return null;
			}
		}
		return invocation.proceed();
	}

}
