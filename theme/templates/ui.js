{#- What a paper page shows only through its scripts, in the site's language: here once,
    not in each of the site's paper pages (app.js puts it in place). The nav's links start
    from a stand-in for the page's relative root. -#}
{% set top %}{% include "_top.html" %}{% endset %}
{% set tools %}
<div class="save" data-save="{{ s.save }}" data-saved="{{ s.saved }}" data-note="{{ s.save_note }}" hidden></div>
<details class="cite" hidden><summary>{{ s.cite }}</summary>
<pre id="bibtex"></pre>
<button type="button" data-copy="bibtex" data-copied="{{ s.copied }}" hidden>{{ s.copy_bibtex }}</button>
</details>
<p class="follows" data-follows data-author="{{ s.follow_author }}" data-category="{{ s.follow_category }}" data-topic="{{ s.follow_topic }}" hidden></p>
{% endset %}
{% set similar %}
<section class="similar" aria-labelledby="similar" data-similar hidden>
<h2 id="similar">{{ s.similar }}</h2>
<ol{% if lang != 'en' %} lang="en"{% endif %}></ol>
<p class="machine">{{ similar_how }}</p>
</section>
{% endset %}
// Made by the build (pipeline/site/pages/static.py) from the theme's ui.js template;
// app.js imports it.
export default {{ {"root": root, "top": top, "tools": tools, "similar": similar,
                   "light_failed": s.light_failed, "storage_full": s.storage_full} | tojson }};
