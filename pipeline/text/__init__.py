"""Pure rules over strings, shared by every stage; they import nothing of ours but each other.

- `ids`: arXiv ids and categories, what is valid.
- `taxonomy`: arXiv's category taxonomy (cs.* and the rest).
- `untrusted`: the gate every outside string passes (`clean_text`, `Findings`).
- `phrases`: phrase matching over whole columns of text (classify and topics).
- `names`: people's names, one person whether initialled or not.
- `changes`: what changed between two texts, word by word and in short.
- `venue`: the venue a comment or journal-ref names.
"""
