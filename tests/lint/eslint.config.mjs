// ESLint for the site's modules (theme/static) and their unit tests (tests/js): the
// recommended rules, browser globals for the site, node's for the tests. `make test`
// runs it from the repository's root with --config this file. One declaration style: const,
// or let for what is assigned again; never var.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  { rules: { "no-var": "error", "prefer-const": "error" } },
  {
    files: ["theme/static/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
  },
  {
    files: ["tests/js/**/*.mjs"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.node },
  },
];
