package dev.atlas.autoconfigure.gray;

import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

import dev.atlas.autoconfigure.settings.CallerSection;
import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.loadbalancer.routing.GrayRules;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;

/**
 * The gray rules of one service, section {@code gray}: whether gray routing is on and the
 * rules (the caller's header, own tag and lane rules with the service's lane settings and
 * canary percentages). Shown flat in a service's view ({@code gray-enabled},
 * {@code gray}). Immutable.
 *
 * @param grayEnabled whether requests are routed to lanes by gray tag
 * ({@code atlas.gray.enabled}, read only at startup); when {@code false}, {@link #gray()}
 * is not applied
 * @param gray the gray rules
 * @since 0.1.0
 */
public record GraySettings(boolean grayEnabled, GrayRules gray) {

	/**
	 * The caller-level section {@code atlas.gray} (header, metadata key, own tag, lane
	 * rules, and the lane defaults of every service); {@code enabled} and
	 * {@code metadata-key} are read only at startup.
	 */
	public static final CallerSection<GrayProperties> CALLER = new CallerSection<>(GrayProperties.PREFIX,
			GrayProperties::new, (binder, gray, atStartup) -> {
				checkLaneRuleKeys(binder);
				if (atStartup != null) {
					gray.setMetadataKey(atStartup.getMetadataKey());
				}
				gray.afterPropertiesSet();
			}, List.of(GrayProperties.PREFIX + ".enabled", GrayProperties.PREFIX + ".metadata-key"));

	/**
	 * The section {@code atlas.gray}, overlaid by
	 * {@code atlas.services.<service-id>.gray} (whose {@code weights} exist per service
	 * only).
	 */
	public static final Section<ServiceGrayProperties, GraySettings> SECTION = Section
		.of("gray", ServiceGrayProperties::new,
				(lanes, context) -> new GraySettings(context.atStartup(CALLER).isEnabled(),
						context.caller(CALLER).rulesFor(context.serviceId(), lanes)))
		.perServiceOnly(ServiceGrayProperties.WEIGHTS)
		.flatView();

	/**
	 * Checks that nothing is missing.
	 * @throws NullPointerException if {@code gray} is {@code null}
	 */
	public GraySettings {
		Objects.requireNonNull(gray, "gray");
	}

	/**
	 * Fails on a key a lane rule does not have (e.g. {@code contains}), which binding
	 * alone would ignore, so that a misspelt matcher does not make a rule that never
	 * matches.
	 */
	private static void checkLaneRuleKeys(Binder binder) {
		String prefix = GrayProperties.PREFIX + ".rules";
		try {
			binder.bind(prefix, Bindable.listOf(LaneRuleProperties.class),
					new NoUnboundElementsBindHandler(BindHandler.DEFAULT));
		}
		catch (BindException ex) {
			if (ex.getCause() instanceof UnboundConfigurationPropertiesException unbound) {
				String names = unbound.getUnboundProperties()
					.stream()
					.map((property) -> property.getName().toString())
					.sorted()
					.collect(Collectors.joining(", "));
				throw new IllegalArgumentException("Invalid " + names + ": unknown key of a lane rule (a rule has "
						+ LaneRuleProperties.ALLOWED_KEYS + ")", ex);
			}
			throw ex;
		}
	}

}
