"""The server side of every authentication mechanism the simulated deployments speak: SCRAM
users, SASL PLAIN, MONGODB-X509, MONGODB-AWS (SigV4 checked, and stand-ins of its credential
endpoints), GSSAPI (a Kerberos stand-in at the SASL boundary), MONGODB-OIDC (a test issuer
and metadata stand-ins), and ``AuthenticatedReplicaSet``, a replica set that needs them."""
