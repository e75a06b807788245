"""The study lab's explorer: one front end (``static/explorer.js``) served as a local web app
(:mod:`.server`, ``truco-lab explore``) and shown in Jupyter as a widget (:mod:`.widget`), both asking
the same :class:`.api.ExplorerAPI`."""
