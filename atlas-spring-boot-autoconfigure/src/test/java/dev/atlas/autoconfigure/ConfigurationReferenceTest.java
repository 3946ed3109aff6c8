package dev.atlas.autoconfigure;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import dev.atlas.autoconfigure.loadbalancer.AtlasProperties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.BeanUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/configuration.md} is the configuration reference: every property of Atlas's
 * generated configuration metadata (spring-boot-configuration-processor, merged with
 * {@code additional-spring-configuration-metadata.json}) has a row there, and every
 * documented {@code atlas.*} row names a property that still exists.
 *
 * <p>
 * A documented property is the code span(s) in the first cell of a table row, e.g.
 * {@code | `atlas.warmup.duration` | `60s` | …}. Map keys are written as placeholders,
 * e.g. {@code atlas.services.<service-id>.loadbalancer.strategy}: a placeholder matches
 * any one key, and placeholders at the end of a name document a map property as a whole
 * ({@code atlas.example.weights.<service-id>.<tag>} documents a map property
 * {@code atlas.example.weights}). The metadata describes a map of objects (such as
 * {@code atlas.services}) by the map alone; its entries' properties are read from the
 * value class, the way Spring Boot binds them, so each of them needs its own row.
 */
class ConfigurationReferenceTest {

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	/** Relative to the module (Maven runs tests there), else to the repository root. */
	private static final List<Path> REFERENCE = List.of(Path.of("../docs/configuration.md"),
			Path.of("docs/configuration.md"));

	/** A property name; segments are kebab-case words or {@code <placeholders>}. */
	private static final Pattern NAME = Pattern
		.compile("[a-z][a-z0-9-]*(?:\\.(?:[a-z0-9][a-z0-9-]*|<[a-z][a-z0-9-]*>))+");

	private static final Pattern CODE = Pattern.compile("`([^`]+)`");

	private static DocumentContext metadata;

	private static List<Property> properties;

	private static List<Documented> documented;

	@BeforeAll
	static void load() throws IOException {
		metadata = ourMetadata();
		properties = properties(metadata);
		documented = documented(reference());
	}

	@Test
	void everyPropertyOfTheMetadataIsDocumented() {
		TreeSet<String> missing = new TreeSet<>();
		for (Property property : properties) {
			if (documented.stream().noneMatch((doc) -> doc.documents(property))) {
				missing.add(property.name());
			}
		}
		assertThat(missing)
			.withFailMessage(() -> String.format("docs/configuration.md does not document %d "
					+ "propert%s of the configuration metadata; add a table row whose first cell names each "
					+ "(map keys as placeholders, e.g. `atlas.services.<service-id>.loadbalancer.strategy`):%n  %s",
					missing.size(), (missing.size() == 1) ? "y" : "ies", String.join(String.format("%n  "), missing)))
			.isEmpty();
	}

	@Test
	void everyDocumentedAtlasPropertyExists() {
		List<String> groups = entries(metadata, "groups").stream().map((group) -> (String) group.get("name")).toList();
		TreeSet<String> unknown = new TreeSet<>();
		for (Documented doc : documented) {
			boolean ours = groups.stream().anyMatch((group) -> doc.name().startsWith(group + "."));
			if (ours && properties.stream().noneMatch(doc::documents)) {
				unknown.add(doc.name() + " (line " + doc.line() + ")");
			}
		}
		assertThat(documented).as("property rows found in docs/configuration.md").isNotEmpty();
		assertThat(unknown)
			.withFailMessage(() -> String.format(
					"docs/configuration.md documents %d "
							+ "propert%s that the configuration metadata does not have (renamed or removed?):%n  %s",
					unknown.size(), (unknown.size() == 1) ? "y" : "ies", String.join(String.format("%n  "), unknown)))
			.isEmpty();
	}

	@Test
	void theMetadataIsAtlasesAndItsMapsOfObjectsAreExpanded() {
		assertThat(properties).extracting(Property::name)
			.contains("atlas.enabled")
			.doesNotContain("atlas.services")
			.anyMatch((name) -> name.startsWith("atlas.services.*."));
	}

	@Test
	void placeholdersMatchOneKeyAndTrailingOnesOnlyAMap() {
		Property strategy = new Property("atlas.services.*.loadbalancer.strategy", false);
		Property weights = new Property("atlas.example.weights", true);
		Property header = new Property("atlas.gray.header", false);
		assertThat(Documented.of("atlas.services.<service-id>.loadbalancer.strategy", 1).documents(strategy)).isTrue();
		assertThat(Documented.of("atlas.services.<service-id>.loadbalancer", 1).documents(strategy)).isFalse();
		assertThat(Documented.of("atlas.example.weights.<service-id>.<tag>", 1).documents(weights)).isTrue();
		assertThat(Documented.of("atlas.example.weights", 1).documents(weights)).isTrue();
		assertThat(Documented.of("atlas.gray.header.<name>", 1).documents(header)).isFalse();
		assertThat(Documented.of("atlas.gray.header", 1).documents(header)).isTrue();
	}

	/**
	 * The metadata file of this module: the class path has one per Spring jar too.
	 */
	private static DocumentContext ourMetadata() throws IOException {
		List<DocumentContext> ours = new ArrayList<>();
		Enumeration<URL> urls = ConfigurationReferenceTest.class.getClassLoader().getResources(METADATA);
		for (URL url : Collections.list(urls)) {
			try (InputStream in = url.openStream()) {
				DocumentContext json = JsonPath.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
				if (entries(json, "groups").stream()
					.anyMatch((group) -> AtlasProperties.class.getName().equals(group.get("type")))) {
					ours.add(json);
				}
			}
		}
		assertThat(ours)
			.as("class path resources " + METADATA + " describing " + AtlasProperties.class.getName()
					+ " (generated by spring-boot-configuration-processor at compile time)")
			.hasSize(1);
		return ours.get(0);
	}

	private static List<Property> properties(DocumentContext metadata) {
		List<Property> properties = new ArrayList<>();
		for (Map<String, Object> entry : entries(metadata, "properties")) {
			String name = (String) entry.get("name");
			String type = (String) entry.get("type");
			Class<?> valueClass = (type != null && type.startsWith("java.util.Map<")) ? mapValueClass(type) : null;
			if (valueClass != null && isBound(valueClass)) {
				expand(name + ".*", valueClass, properties);
			}
			else {
				properties.add(new Property(name, type != null && type.startsWith("java.util.Map<")));
			}
		}
		return properties;
	}

	/**
	 * The entries of a top-level array of a metadata file ({@code groups},
	 * {@code properties}).
	 */
	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> entries(DocumentContext json, String array) {
		Map<String, Object> root = json.read("$");
		Object entries = root.get(array);
		return (entries instanceof List<?> list) ? (List<Map<String, Object>>) list : List.of();
	}

	/** {@code java.util.Map<java.lang.String,a.b.C$D>} gives {@code a.b.C$D}. */
	private static Class<?> mapValueClass(String type) {
		String arguments = type.substring(type.indexOf('<') + 1, type.lastIndexOf('>'));
		if (arguments.indexOf('<') >= 0) {
			return null;
		}
		try {
			return Class.forName(arguments.substring(arguments.indexOf(',') + 1).trim());
		}
		catch (ClassNotFoundException ex) {
			return null;
		}
	}

	/** An Atlas class that Spring Boot binds property by property. */
	private static boolean isBound(Class<?> type) {
		return type.getPackageName().startsWith("dev.atlas") && !type.isEnum() && !type.isInterface();
	}

	/** The properties of one bound object under a prefix, as Spring Boot binds them. */
	private static void expand(String prefix, Class<?> type, List<Property> into) {
		Map<String, Type> members = new LinkedHashMap<>();
		if (type.isRecord()) {
			for (RecordComponent component : type.getRecordComponents()) {
				members.put(component.getName(), component.getGenericType());
			}
		}
		else {
			for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
				if (descriptor.getReadMethod() == null || "class".equals(descriptor.getName())) {
					continue;
				}
				// Without a setter, Spring Boot binds into the object the getter returns:
				// nested objects, maps and collections only.
				Class<?> raw = descriptor.getPropertyType();
				if (descriptor.getWriteMethod() != null || isBound(raw) || Map.class.isAssignableFrom(raw)
						|| Collection.class.isAssignableFrom(raw)) {
					members.put(descriptor.getName(), descriptor.getReadMethod().getGenericReturnType());
				}
			}
		}
		members.forEach((member, memberType) -> {
			String name = prefix + "." + dashed(member);
			Class<?> raw = raw(memberType);
			if (Map.class.isAssignableFrom(raw)) {
				Type value = (memberType instanceof ParameterizedType parameterized)
						? parameterized.getActualTypeArguments()[1] : Object.class;
				if (value instanceof Class<?> valueClass && isBound(valueClass)) {
					expand(name + ".*", valueClass, into);
				}
				else {
					into.add(new Property(name, true));
				}
			}
			else if (isBound(raw)) {
				expand(name, raw, into);
			}
			else {
				into.add(new Property(name, false));
			}
		});
	}

	private static Class<?> raw(Type type) {
		if (type instanceof Class<?> c) {
			return c;
		}
		if (type instanceof ParameterizedType parameterized) {
			return (Class<?>) parameterized.getRawType();
		}
		return Object.class;
	}

	/** {@code minHealthyRatio} gives {@code min-healthy-ratio}. */
	private static String dashed(String camelCase) {
		StringBuilder dashed = new StringBuilder();
		for (char c : camelCase.toCharArray()) {
			if (Character.isUpperCase(c)) {
				dashed.append('-').append(Character.toLowerCase(c));
			}
			else {
				dashed.append(c);
			}
		}
		return dashed.toString();
	}

	private static List<String> reference() throws IOException {
		for (Path path : REFERENCE) {
			if (Files.isRegularFile(path)) {
				return Files.readAllLines(path, StandardCharsets.UTF_8);
			}
		}
		throw new IllegalStateException("docs/configuration.md not found from " + Path.of("").toAbsolutePath());
	}

	/** The property names in the first cell of every table row. */
	private static List<Documented> documented(List<String> lines) {
		List<Documented> documented = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			String line = lines.get(i).trim();
			if (!line.startsWith("|")) {
				continue;
			}
			String[] cells = line.split("(?<!\\\\)\\|", -1);
			if (cells.length < 2) {
				continue;
			}
			Matcher code = CODE.matcher(cells[1]);
			while (code.find()) {
				String name = code.group(1).trim();
				if (NAME.matcher(name).matches()) {
					documented.add(Documented.of(name, i + 1));
				}
			}
		}
		return documented;
	}

	/**
	 * A property of the metadata.
	 *
	 * @param name its name, {@code *} for a map key
	 * @param map whether its value is a map (documented with keys or as a whole)
	 */
	record Property(String name, boolean map) {

		List<String> segments() {
			return Arrays.asList(this.name.split("\\."));
		}

	}

	/**
	 * A documented property name.
	 *
	 * @param name as written, e.g. {@code atlas.services.<service-id>.gray.weights.<tag>}
	 * @param line its line in the reference
	 * @param segments the name's segments, placeholders as {@code *}, trailing
	 * placeholders removed
	 * @param trailingKeys whether placeholders were removed from the end
	 */
	record Documented(String name, int line, List<String> segments, boolean trailingKeys) {

		static Documented of(String name, int line) {
			List<String> segments = new ArrayList<>();
			for (String segment : name.split("\\.")) {
				segments.add(segment.startsWith("<") ? "*" : segment);
			}
			int end = segments.size();
			while (end > 1 && "*".equals(segments.get(end - 1))) {
				end--;
			}
			return new Documented(name, line, List.copyOf(segments.subList(0, end)), end < segments.size());
		}

		boolean documents(Property property) {
			List<String> other = property.segments();
			if ((this.trailingKeys && !property.map()) || other.size() != this.segments.size()) {
				return false;
			}
			for (int i = 0; i < other.size(); i++) {
				String mine = this.segments.get(i);
				String theirs = other.get(i);
				if (!mine.equals(theirs) && !"*".equals(mine) && !"*".equals(theirs)) {
					return false;
				}
			}
			return true;
		}

	}

}
