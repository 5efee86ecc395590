"""Free-text queries as agents type them: a dash between words is punctuation, never tantivy's exclusion."""

import tantivy

from worldforge.corpus.index import parse_query


def _index(tmp_path, titles):
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("title", stored=True)
    index = tantivy.Index(builder.build(), path=str(tmp_path))
    writer = index.writer()
    for t in titles:
        writer.add_document(tantivy.Document(title=t))
    writer.commit()
    index.reload()
    return index


def _titles(index, query):
    searcher = index.searcher()
    return [searcher.doc(addr)["title"][0] for _, addr in searcher.search(parse_query(index, query, ["title"]), 10).hits]


def test_a_lone_dash_is_punctuation(tmp_path):
    index = _index(tmp_path, ["Ferreira Azevedo - ME", "Ferreira Camargo S.A.", "Azevedo S.A."])
    assert _titles(index, "Ferreira Azevedo - ME")[0] == "Ferreira Azevedo - ME"
    assert _titles(index, "Ferreira Azevedo – ME")[0] == "Ferreira Azevedo - ME"  # an en dash as well


def test_a_dash_before_a_word_still_excludes(tmp_path):
    index = _index(tmp_path, ["Ferreira Azevedo - ME", "Ferreira Camargo S.A."])
    assert _titles(index, "Ferreira -Azevedo") == ["Ferreira Camargo S.A."]
