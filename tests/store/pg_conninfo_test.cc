// What may be said about a conninfo: its host, port, database and user, never its password,
// however the password is written.
#include "store/pg_conninfo.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(PgConninfoTest, DescribesTheNonSecretFieldsOfAURLOrKeyValuePairs) {
  EXPECT_EQ(DescribeConninfo("postgresql://allot:pw@db1:5433/journal?sslmode=require"),
            "host=db1 port=5433 dbname=journal user=allot");
  EXPECT_EQ(DescribeConninfo("postgres://db1/journal"), "host=db1 dbname=journal");
  EXPECT_EQ(DescribeConninfo("host=db1 dbname=journal password=pw"), "host=db1 dbname=journal");
  EXPECT_EQ(DescribeConninfo("hostaddr=10.0.0.7 dbname=journal"), "hostaddr=10.0.0.7 dbname=journal");
  EXPECT_EQ(DescribeConninfo(""), "libpq defaults");
  EXPECT_EQ(DescribeConninfo("postgresql://allot:pw%zz@db1/journal"), "an unparseable conninfo");
}

TEST(PgConninfoTest, RedactsPasswordsHoweverTheyAreWritten) {
  struct Case {
    const char* conninfo;
    const char* secret;
  };
  for (Case c : {Case{"postgresql://allot:hunter2@db1/j", "hunter2"},
                 Case{"postgresql://allot:hun%74er2@db1/j", "hun%74er2"},  // raw form
                 Case{"postgresql://allot:hun%74er2@db1/j", "hunter2"},    // decoded form
                 Case{"postgresql://allot:hun%zzer2@db1/j", "hun%zzer2"},  // unparseable
                 Case{"postgresql://allot@db1/j?sslmode=require&password=hunter2", "hunter2"},
                 Case{"host=db1 password=hunter2 dbname=j", "hunter2"},
                 Case{"host=db1 password = 'hunter 2' dbname=j", "hunter 2"},
                 Case{"host=db1 password='hun\\'ter2' dbname=j", "hun\\'ter2"}}) {
    std::string message = std::string("failed for ") + c.secret + " (again " + c.secret + ")";
    EXPECT_EQ(RedactPasswords(message, c.conninfo), "failed for *** (again ***)") << c.conninfo;
  }
  EXPECT_EQ(RedactPasswords("user allot: no route", "postgresql://allot@db1/j"), "user allot: no route")
      << "a URL without a password redacts nothing";
  EXPECT_EQ(RedactPasswords("sslpassword is not a password", "host=db1 sslpassword=x"), "sslpassword is not a password")
      << "only the password keyword";
}

}  // namespace
}  // namespace allot
